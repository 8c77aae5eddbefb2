// Bad input at the token endpoint and forged tokens at the API, answered with the right code and body.
import assert from 'node:assert/strict';
import { createPublicKey, createHmac, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import jwt from 'jsonwebtoken';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  installIamCrds,
  startReadyServer,
  passwordLogin,
  postForm,
} from '../support/iam-fixtures.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const USER = { name: 'errors-erin', password: 'erin-Pa55word!', groups: ['developers'] };
const CLIENT = { client_id: 'platform', client_secret: 'platform' };

function basic(id: string, secret: string): string {
  return 'Basic ' + Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');
}

async function raw(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: Headers; text: string; json: Record<string, unknown> | undefined }> {
  const res = await fetch(url, { method: init.method ?? 'POST', headers: init.headers, body: init.body });
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** An RFC 6749 error body: exactly {error, error_description}, no internals. */
function assertOAuthError(
  res: { status: number; json: Record<string, unknown> | undefined; text: string },
  status: number,
  error: string,
  description?: RegExp,
) {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.json ?? {}).sort(), ['error', 'error_description'], res.text);
  assert.equal(res.json!['error'], error, res.text);
  if (description) assert.match(String(res.json!['error_description']), description);
  assert.ok(!/\bat .*\.ts:\d+|Error:|stack/i.test(res.text), `no internals in ${res.text}`);
}

describe('token endpoint: bad input', () => {
  let kc: KubeConfig;
  let server: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;
  let tokenUrl: string;

  before(async () => {
    const cp = await testControlPlane();
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [USER.name]);
    await createUser(kc, USER);
    keys = generateTestKeys();
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
    ]);
    tokenUrl = `${server.url}/oauth/token`;
  });

  after(async () => {
    await server?.stop();
    await deleteUsersAndSessions(kc, [USER.name]);
    keys?.cleanup();
  });

  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const formHeaders = { 'Content-Type': 'application/x-www-form-urlencoded' };
  const good = { grant_type: 'password', username: USER.name, password: USER.password, ...CLIENT };

  test('a correct login succeeds, with Cache-Control: no-store', async () => {
    const res = await raw(tokenUrl, { headers: formHeaders, body: form(good) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(Object.keys(res.json!).sort(), [
      'access_token',
      'expires_in',
      'refresh_token',
      'token_type',
    ]);
  });

  test('wrong content type → 415; other methods → 405 with Allow', async () => {
    assertOAuthError(
      await raw(tokenUrl, { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(good) }),
      415,
      'invalid_request',
      /x-www-form-urlencoded/,
    );
    assertOAuthError(await raw(tokenUrl, { body: form(good), headers: {} }), 415, 'invalid_request');
    assertOAuthError(
      await raw(tokenUrl, {
        headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=latin1' },
        body: form(good),
      }),
      415,
      'invalid_request',
      /charset/,
    );
    const get = await raw(tokenUrl, { method: 'GET' });
    assertOAuthError(get, 405, 'invalid_request');
    assert.equal(get.headers.get('allow'), 'POST');
    assert.equal(
      (await raw(tokenUrl, { method: 'PUT', headers: formHeaders, body: form(good) })).status,
      405,
    );
  });

  test('body over 16 KiB → 413', async () => {
    const huge = form({ ...good, padding: 'x'.repeat(17 * 1024) });
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: huge }),
      413,
      'invalid_request',
      /too large/,
    );
  });

  test('missing, repeated and malformed fields → 400 invalid_request naming the field', async () => {
    const { username: _u, ...noUser } = good;
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: form(noUser) }),
      400,
      'invalid_request',
      /username/,
    );
    const { password: _p, ...noPassword } = good;
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: form(noPassword) }),
      400,
      'invalid_request',
      /password/,
    );
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: `${form(good)}&username=someone-else` }),
      400,
      'invalid_request',
      /username.*repeated/,
    );
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: `${form(good)}&x=%zz` }),
      400,
      'invalid_request',
      /percent-encoding/,
    );
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: form({ grant_type: 'refresh_token', ...CLIENT }) }),
      400,
      'invalid_request',
      /refresh_token/,
    );
  });

  test('non-UTF-8 bodies → 400', async () => {
    const rawLatin1 = Buffer.concat([Buffer.from(`${form(good)}&display=`), Buffer.from([0xe9, 0xff, 0xfe])]);
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: rawLatin1 }),
      400,
      'invalid_request',
      /UTF-8/,
    );
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: `${form(good)}&display=%E9%FF` }),
      400,
      'invalid_request',
    );
  });

  test('unsupported grant types → 400 unsupported_grant_type', async () => {
    for (const grant of ['client_credentials', 'authorization_code', 'code', 'urn:x']) {
      assertOAuthError(
        await raw(tokenUrl, { headers: formHeaders, body: form({ ...good, grant_type: grant }) }),
        400,
        'unsupported_grant_type',
      );
    }
  });

  test('no grant_type, or an empty one → 400 unsupported_grant_type, as the original answers', async () => {
    const { grant_type: _g, ...noGrant } = good;
    for (const body of [form(noGrant), form({ ...noGrant, grant_type: '' })]) {
      assertOAuthError(
        await raw(tokenUrl, { headers: formHeaders, body }),
        400,
        'unsupported_grant_type',
        /grant_type is required/,
      );
    }
  });

  test('client authentication: missing, wrong, malformed Basic, both methods', async () => {
    const { client_id: _i, client_secret: _s, ...noClient } = good;
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: form(noClient) }),
      401,
      'invalid_client',
    );
    const wrongPost = await raw(tokenUrl, {
      headers: formHeaders,
      body: form({ ...good, client_secret: 'nope' }),
    });
    assertOAuthError(wrongPost, 401, 'invalid_client');
    assert.equal(
      wrongPost.headers.get('www-authenticate'),
      null,
      'no Basic challenge when Basic was not used',
    );
    assertOAuthError(
      await raw(tokenUrl, { headers: formHeaders, body: form({ ...good, client_id: 'unknown' }) }),
      401,
      'invalid_client',
    );

    const wrongBasic = await raw(tokenUrl, {
      headers: { ...formHeaders, Authorization: basic('platform', 'nope') },
      body: form(noClient),
    });
    assertOAuthError(wrongBasic, 401, 'invalid_client');
    assert.match(wrongBasic.headers.get('www-authenticate') ?? '', /^Basic /);

    const okBasic = await raw(tokenUrl, {
      headers: { ...formHeaders, Authorization: basic('platform', 'platform') },
      body: form(noClient),
    });
    assert.equal(okBasic.status, 200, okBasic.text);

    for (const header of [
      'Basic',
      'Basic !!!!',
      'Basic ' + Buffer.from('no-colon').toString('base64'),
      'Basic ' + Buffer.from(':secret-without-id').toString('base64'),
      'Basic ' + Buffer.from([0x70, 0x3a, 0xff, 0xfe]).toString('base64'),
      'Basic cGxhdGZvcm06cGxhdGZvcm0', // unpadded
    ]) {
      const res = await raw(tokenUrl, {
        headers: { ...formHeaders, Authorization: header },
        body: form(noClient),
      });
      assertOAuthError(res, 401, 'invalid_client', /malformed/);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
    }

    assertOAuthError(
      await raw(tokenUrl, {
        headers: { ...formHeaders, Authorization: basic('platform', 'platform') },
        body: form(good),
      }),
      400,
      'invalid_request',
      /not both/,
    );
  });

  test('unknown user and wrong password get the same answer', async () => {
    const unknown = await raw(tokenUrl, {
      headers: formHeaders,
      body: form({ ...good, username: 'errors-nobody' }),
    });
    const wrong = await raw(tokenUrl, {
      headers: formHeaders,
      body: form({ ...good, password: 'wrong password' }),
    });
    assertOAuthError(unknown, 400, 'invalid_grant');
    assert.deepEqual(unknown.json, wrong.json);
    const weird = await raw(tokenUrl, {
      headers: formHeaders,
      body: form({ ...good, username: '../../etc/passwd' }),
    });
    assert.deepEqual(weird.json, wrong.json);
  });

  test('a login the ledger cannot admit (its CRD missing) → 503 temporarily_unavailable, never a 500', async () => {
    // Another platform name: its iam group is not installed, so no login ledger can be written.
    const cp = await testControlPlane();
    const bare = await startServerProcess([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      '--platformName=errors-nocrd',
      '--auth.addressRequestsPerMinute=0',
    ]);
    try {
      const res = await raw(`${bare.url}/oauth/token`, {
        headers: formHeaders,
        body: form({
          ...good,
          client_id: 'errors-nocrd',
          client_secret: 'errors-nocrd',
          username: 'errors-nobody',
        }),
      });
      assertOAuthError(res, 503, 'temporarily_unavailable');
      assert.equal(res.headers.get('retry-after'), '1');
    } finally {
      await bare.stop();
    }
  });

  test('unknown /oauth paths answer in RFC 6749 form', async () => {
    assertOAuthError(
      await raw(`${server.url}/oauth/nothing-here`, { method: 'GET' }),
      404,
      'invalid_request',
    );
  });

  describe('forged and unfit tokens are refused by bearer authentication', () => {
    let access: string;
    let refresh: string;
    const signingKey = () => createPrivateKey(readFileSync(keys.es256));
    const api = (token: string) =>
      raw(`${server.url}/kapis/errors-test/v1/things`, {
        method: 'GET',
        headers: { Authorization: `Bearer ${token}` },
      });
    const assertUnauthorized = async (token: string, message: RegExp) => {
      const res = await api(token);
      assert.equal(res.status, 401, res.text);
      assert.equal(res.json?.['kind'], 'Status');
      assert.equal(res.json?.['reason'], 'Unauthorized');
      assert.match(String(res.json?.['message']), message);
      assert.match(
        res.headers.get('www-authenticate') ?? '',
        /^Bearer realm="platform", error="invalid_token"/,
      );
    };
    const parts = (token: string) => token.split('.') as [string, string, string];
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = () => jwt.decode(access) as Record<string, unknown>;
    const header = () =>
      JSON.parse(Buffer.from(parts(access)[0], 'base64url').toString()) as Record<string, unknown>;

    before(async () => {
      const login = await passwordLogin(server.url, USER.name, USER.password);
      access = login.body['access_token'] as string;
      refresh = login.body['refresh_token'] as string;
      assert.equal((await api(access)).status, 404, 'the genuine token passes authentication');
    });

    test('missing or non-Bearer Authorization', async () => {
      const none = await raw(`${server.url}/kapis/errors-test/v1/things`, { method: 'GET' });
      assert.equal(none.status, 401);
      assert.equal(none.json?.['kind'], 'Status');
      assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="platform"');
      const basicAuth = await raw(`${server.url}/kapis/errors-test/v1/things`, {
        method: 'GET',
        headers: { Authorization: basic(USER.name, USER.password) },
      });
      assert.equal(basicAuth.status, 401);
      await assertUnauthorized('not-a-jwt', /not a JWT/);
    });

    test('tampered payload', async () => {
      const [h, , s] = parts(access);
      await assertUnauthorized(
        `${h}.${b64({ ...claims(), username: 'admin', sub: 'admin' })}.${s}`,
        /signature/,
      );
    });

    test('alg none', async () => {
      const [, p] = parts(access);
      await assertUnauthorized(`${b64({ alg: 'none', typ: 'JWT' })}.${p}.`, /unknown key|signature/);
      await assertUnauthorized(`${b64({ ...header(), alg: 'none' })}.${p}.`, /algorithm/);
    });

    test('HS256 signed with the public key (algorithm confusion)', async () => {
      const publicPem = createPublicKey(signingKey()).export({ type: 'spki', format: 'pem' }).toString();
      const head = b64({ ...header(), alg: 'HS256' });
      const body = b64(claims());
      const mac = createHmac('sha256', publicPem).update(`${head}.${body}`).digest('base64url');
      await assertUnauthorized(`${head}.${body}.${mac}`, /algorithm/);
    });

    test('unknown kid, wrong issuer, wrong audience, expired, not yet valid', async () => {
      const sign = (payload: Record<string, unknown>, kid = String(header()['kid'])) =>
        jwt.sign(payload, signingKey(), { algorithm: 'ES256', keyid: kid });
      const now = Math.floor(Date.now() / 1000);
      await assertUnauthorized(sign(claims(), 'no-such-kid'), /unknown key/);
      await assertUnauthorized(sign({ ...claims(), iss: 'someone-else' }), /issuer/);
      await assertUnauthorized(sign({ ...claims(), aud: 'other-client' }), /client/);
      await assertUnauthorized(
        sign({ ...claims(), iat: now - 7300, nbf: now - 7300, exp: now - 100 }),
        /expired/,
      );
      await assertUnauthorized(sign({ ...claims(), nbf: now + 600 }), /not valid yet/);
      // Within the clock-skew leeway (10 s by default) a token is still accepted.
      assert.equal((await api(sign({ ...claims(), exp: now - 3 }))).status, 404);
    });

    test('a token issued before token_type took the original values (access) is still accepted', async () => {
      const sign = (payload: Record<string, unknown>) =>
        jwt.sign(payload, signingKey(), { algorithm: 'ES256', keyid: String(header()['kid']) });
      assert.equal(claims()['token_type'], 'access_token');
      assert.equal((await api(sign({ ...claims(), token_type: 'access' }))).status, 404);
      await assertUnauthorized(sign({ ...claims(), token_type: 'refresh' }), /expected an access token/);
      await assertUnauthorized(sign({ ...claims(), token_type: 'static_token' }), /required claims/);
    });

    test('a refresh token is not a bearer token; an access token is not a refresh token', async () => {
      await assertUnauthorized(refresh, /expected an access token/);
      const res = await postForm(`${server.url}/oauth/token`, {
        grant_type: 'refresh_token',
        refresh_token: access,
        ...CLIENT,
      });
      assert.equal(res.status, 400);
      assert.equal(res.body['error'], 'invalid_grant');
    });
  });
});
