// The token service end to end, driven by a standard OAuth 2.0 client library (simple-oauth2) and checked
// with a standard JOSE library (jose) against the published JWKS. Real kube-apiserver, real server process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { ResourceOwnerPassword } from 'simple-oauth2';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUser,
  deleteUsersAndSessions,
  generateTestKeys,
  getUser,
  installIamCrds,
  startReadyServer,
  listSessions,
  passwordLogin,
  postForm,
  setUserState,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { sampleSum } from '../support/metrics-exposition.ts';

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

function runWithStdin(command: string, args: string[], stdin: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${command} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout),
    );
    child.stdin!.end(stdin);
  });
}

const ALICE = {
  name: 'flow-alice',
  password: 'correct horse battery staple',
  groups: ['developers'],
  email: 'alice@flow.example',
};
const BOB = { name: 'flow-bob', password: 'bob-Pa55word!', groups: ['viewers'] };
const CAROL = { name: 'flow-carol', password: 'carol-Pa55word!', groups: [] as string[] };
const ERIN = { name: 'flow-erin', password: 'erin-Pa55word!', groups: [] as string[] };
const GINA = { name: 'flow-gina', password: 'gina-Pa55word!', groups: [] as string[] };

describe('OAuth flow with a standard client library', () => {
  let kc: KubeConfig;
  let server: ServerProcess;
  let serverArgs: string[];
  let keys: ReturnType<typeof generateTestKeys>;
  let kubectl: string;
  let kubeconfigPath: string;

  const client = (authorizationMethod: 'header' | 'body') =>
    new ResourceOwnerPassword({
      client: { id: 'platform', secret: 'platform' },
      auth: { tokenHost: server.url, tokenPath: '/oauth/token', revokePath: '/oauth/revoke' },
      options: { authorizationMethod },
    });
  const api = (token: string, path = '/kapis/flow-test/v1/things') =>
    fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });

  before(async () => {
    const cp = await testControlPlane();
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [ALICE.name, BOB.name, CAROL.name, ERIN.name, GINA.name]);
    await createUser(kc, ALICE);
    await createUser(kc, BOB);
    await createUser(kc, CAROL);
    await createUser(kc, ERIN);
    await createUser(kc, GINA);
    keys = generateTestKeys();
    serverArgs = [
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      '--auth.sessionSweepIntervalSeconds=1',
    ];
    server = await startReadyServer(serverArgs);
    kubectl = cp.binaries.kubectl;
    kubeconfigPath = cp.kubeconfigPath;
  });

  after(async () => {
    await server?.stop();
    await deleteUsersAndSessions(kc, [ALICE.name, BOB.name, CAROL.name, ERIN.name, GINA.name]);
    keys?.cleanup();
  });

  test('password grant (client_secret_basic) → bearer access → refresh → revoke', async () => {
    const token = await client('header').getToken({ username: ALICE.name, password: ALICE.password });
    assert.equal(token.token['token_type'], 'Bearer');
    assert.equal(token.token['expires_in'], 7200);
    assert.equal(typeof token.token['refresh_token'], 'string');
    assert.equal(token.expired(), false);
    const access = token.token['access_token'] as string;

    // The identity behind the token: user's current groups plus system:authenticated.
    const info = await fetch(`${server.url}/oauth/userinfo`, {
      headers: { Authorization: `Bearer ${access}` },
    });
    assert.equal(info.status, 200);
    assert.deepEqual(await info.json(), {
      sub: ALICE.name,
      username: ALICE.name,
      groups: ['developers', 'system:authenticated'],
    });
    // Any non-anonymous path: authenticated requests get past authentication (404: no such route).
    assert.equal((await api(access)).status, 404);
    assert.equal((await fetch(`${server.url}/kapis/flow-test/v1/things`)).status, 401);

    // The session exists in the cluster and the login was recorded on the user.
    const sessions = await listSessions(kc, ALICE.name);
    assert.equal(sessions.length, 1);
    await waitFor('lastLoginTime on the user', async () =>
      (await getUser(kc, ALICE.name)).status?.['lastLoginTime'] ? true : undefined,
    );

    const refreshed = await token.refresh();
    const newAccess = refreshed.token['access_token'] as string;
    assert.notEqual(newAccess, access);
    assert.notEqual(refreshed.token['refresh_token'], token.token['refresh_token']);
    assert.equal((await api(newAccess)).status, 404);
    assert.equal((await listSessions(kc, ALICE.name)).length, 1, 'refresh rotates within the same session');

    await refreshed.revoke('refresh_token');
    assert.equal((await listSessions(kc, ALICE.name)).length, 0);
    // Both tokens of the session stop working.
    await waitFor(
      'revoked access token refused',
      async () => ((await api(newAccess)).status === 401 ? true : undefined),
      {
        timeoutMs: 2000,
      },
    );
    await assert.rejects(refreshed.refresh(), (err: { output?: { statusCode?: number } }) => {
      assert.equal(err.output?.statusCode, 400);
      return true;
    });
  });

  test('later logins write only lastLoginTime, as merge patches that concurrent logins cannot conflict on and share', async () => {
    const statusOf = async () => (await getUser(kc, ERIN.name)).status ?? {};
    assert.equal((await passwordLogin(server.url, ERIN.name, ERIN.password)).status, 200);
    // The first login makes the state visible (a compare-and-swap of the whole status).
    const first = await waitFor('the first login on the user', async () => {
      const status = await statusOf();
      return status['state'] === 'Active' && status['lastLoginTime'] ? status : undefined;
    });
    // A field written by someone else meanwhile: the later logins' writes must leave it.
    const api = kc.makeApiClient(CustomObjectsApi);
    const user = (await api.getClusterCustomObject({
      group: 'iam.platform.io',
      version: 'v1alpha2',
      plural: 'users',
      name: ERIN.name,
    })) as { status?: Record<string, unknown> };
    await api.replaceClusterCustomObjectStatus({
      group: 'iam.platform.io',
      version: 'v1alpha2',
      plural: 'users',
      name: ERIN.name,
      body: { ...user, status: { ...user.status, reason: 'reviewed by an administrator' } },
    });
    const patches = async () =>
      sampleSum(
        await (await fetch(`${server.url}/metrics`)).text(),
        'platform_upstream_request_duration_seconds_count',
        {
          source: 'client',
          verb: 'PATCH',
          code: '200',
        },
      );
    const patchesBefore = await patches();

    const logins = await Promise.all(
      Array.from({ length: 5 }, () => passwordLogin(server.url, ERIN.name, ERIN.password)),
    );
    assert.deepEqual(
      logins.map((r) => r.status),
      [200, 200, 200, 200, 200],
    );
    // Written after the answers, not awaited by them: the first at once, the logins after it within the
    // interval (LOGIN_TIME_WRITE_INTERVAL_MS) in one more write of the newest time, not one patch per login.
    await waitFor('the first merge patch and the one the later logins share', async () =>
      (await patches()) >= patchesBefore + 2 ? true : undefined,
    );
    const written = (await patches()) - patchesBefore;
    assert.ok(written <= 3, `${written} last-login patches for 5 logins within the interval`);
    const after = await statusOf();
    assert.ok(String(after['lastLoginTime']) > String(first['lastLoginTime']), 'lastLoginTime moved forward');
    assert.equal(after['state'], 'Active');
    assert.equal(after['reason'], 'reviewed by an administrator');
  });

  test('password grant with client_secret_post and login by e-mail', async () => {
    const token = await client('body').getToken({ username: ALICE.email, password: ALICE.password });
    const claims = decodeJwt(token.token['access_token'] as string);
    assert.equal(claims['username'], ALICE.name);
    await token.revokeAll();
  });

  test('tokens carry the documented claims and verify against the published JWKS (ES256, kid)', async () => {
    const token = await client('header').getToken({ username: BOB.name, password: BOB.password });
    const access = token.token['access_token'] as string;
    const refresh = token.token['refresh_token'] as string;
    const header = decodeProtectedHeader(access);
    assert.equal(header.alg, 'ES256');
    assert.equal(typeof header.kid, 'string');

    const discovery = (await (
      await fetch(`${server.url}/.well-known/openid-configuration`)
    ).json()) as Record<string, string>;
    assert.equal(discovery['issuer'], 'platform');
    assert.equal(discovery['token_endpoint'], `${server.url}/oauth/token`);
    const jwks = createRemoteJWKSet(new URL(discovery['jwks_uri']!));
    const { payload } = await jwtVerify(access, jwks, { issuer: 'platform', audience: 'platform' });
    assert.equal(payload.sub, BOB.name);
    assert.equal(payload['username'], BOB.name);
    assert.equal(payload['token_type'], 'access_token');
    assert.equal(payload.exp! - payload.iat!, 7200);
    assert.equal(payload.nbf, payload.iat);
    assert.equal(typeof payload.jti, 'string');
    assert.equal(typeof payload['sid'], 'string');
    assert.equal(payload['sinc'], 1, 'a new session’s first incarnation');
    const refreshClaims = decodeJwt(refresh);
    assert.equal(refreshClaims['token_type'], 'refresh_token');
    assert.equal(refreshClaims['sid'], payload['sid']);
    assert.equal(refreshClaims['sinc'], payload['sinc']);
    assert.ok(refreshClaims.exp! > payload.exp!, 'refresh token outlives the access token');

    // A refresh token is not an access token.
    const asBearer = await api(refresh);
    assert.equal(asBearer.status, 401);
    await token.revokeAll();
  });

  test('reusing a rotated refresh token revokes the whole session', async () => {
    const first = await client('header').getToken({ username: BOB.name, password: BOB.password });
    const second = await first.refresh();
    const third = await second.refresh();
    assert.equal((await api(third.token['access_token'] as string)).status, 404);

    // The first refresh token again: not the one redeemed last, so no grace (that covers only a retry of
    // the latest redemption, see oauth-replicas): refused, and the session (with every pair) is gone.
    await assert.rejects(first.refresh());
    assert.equal((await api(third.token['access_token'] as string)).status, 401);
    await assert.rejects(third.refresh());
  });

  test('logout ends the session: access and refresh tokens stop working', async () => {
    const login = await passwordLogin(server.url, CAROL.name, CAROL.password);
    assert.equal(login.status, 200);
    const access = login.body['access_token'] as string;
    const logout = await fetch(`${server.url}/oauth/logout`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${access}` },
    });
    assert.equal(logout.status, 200);
    assert.equal((await api(access)).status, 401);
    const refresh = await postForm(`${server.url}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: login.body['refresh_token'] as string,
      client_id: 'platform',
      client_secret: 'platform',
    });
    assert.equal(refresh.status, 400);
    assert.equal(refresh.body['error'], 'invalid_grant');
  });

  test('a user holds at most auth.maxSessionsPerUser sessions: a login beyond it ends the oldest', async () => {
    const limited = await startReadyServer([...serverArgs, '--auth.maxSessionsPerUser=2']);
    try {
      const login = async () => {
        const res = await passwordLogin(limited.url, GINA.name, GINA.password);
        assert.equal(res.status, 200);
        const access = res.body['access_token'] as string;
        const { sid, sinc } = decodeJwt<{ sid: string; sinc: number }>(access);
        return { access, refresh: res.body['refresh_token'] as string, sid, sinc };
      };
      const status = async (token: string) =>
        (
          await fetch(`${limited.url}/kapis/flow-test/v1/things`, {
            headers: { Authorization: `Bearer ${token}` },
          })
        ).status;
      const redeem = (refreshToken: string) =>
        postForm(`${limited.url}/oauth/token`, {
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: 'platform',
          client_secret: 'platform',
        });
      const first = await login();
      // The replica counts the sessions its cache holds, which its watch fills within milliseconds: log
      // in again until the first session has been ended and the user holds two.
      let last = await login();
      await waitFor('logins beyond the limit end the oldest sessions', async () => {
        last = await login();
        const held = (await listSessions(kc, GINA.name)).length;
        return (await status(first.access)) === 401 && held === 2 ? true : undefined;
      });
      assert.equal(await status(last.access), 404, 'the newest session works');

      // The first session was taken over by a later login (one write, not a delete and a create): that
      // login holds it now, under its next incarnation, and the first login's tokens are over.
      const heir = await waitFor('a login takes over the first session', async () => {
        const next = await login();
        return next.sid === first.sid ? next : undefined;
      });
      assert.ok(heir.sinc >= 2, `incarnation ${heir.sinc}`);
      const stored = (await listSessions(kc, GINA.name)).find((s) => s.metadata.name === first.sid);
      assert.equal(stored?.spec.incarnation, heir.sinc);
      assert.equal(await status(heir.access), 404, 'the heir’s token works at once');
      assert.equal(await status(first.access), 401, 'the first login’s access token is over');
      // Redeeming the first login's refresh token is no reuse of the heir's: refused, and the heir's
      // session stays. Nor does the first login's logout end it.
      const stale = await redeem(first.refresh);
      assert.equal(stale.status, 400);
      assert.equal(stale.body['error'], 'invalid_grant');
      const loggedOut = await fetch(`${limited.url}/oauth/logout`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${first.access}` },
      });
      assert.equal(loggedOut.status, 200);
      assert.equal(
        await status(heir.access),
        404,
        'the heir’s session outlives the first login’s refresh and logout',
      );
      const renewed = await redeem(heir.refresh);
      assert.equal(renewed.status, 200, JSON.stringify(renewed.body));
      assert.equal(await status(renewed.body['access_token'] as string), 404);

      // Logins at the limit at once all pick the same oldest sessions to end: none of them fails, and the
      // user is back at the limit after the next login.
      await Promise.all(Array.from({ length: 4 }, login));
      await waitFor('the user back at the limit', async () => {
        last = await login();
        return (await listSessions(kc, GINA.name)).length === 2 ? true : undefined;
      });
      assert.equal(await status(last.access), 404);
      const refresh = await redeem(first.refresh);
      assert.equal(refresh.status, 400);
      assert.equal(refresh.body['error'], 'invalid_grant');
      const ended = sampleSum(
        await (await fetch(`${limited.url}/metrics`)).text(),
        'platform_auth_sessions_ended_total',
        { reason: 'session_limit' },
      );
      assert.ok(ended >= 1, `sessions ended for the limit: ${ended}`);
    } finally {
      await limited.stop();
    }
  });

  test('a disabled user can neither log in nor use tokens already issued', async () => {
    const login = await passwordLogin(server.url, CAROL.name, CAROL.password);
    const access = login.body['access_token'] as string;
    assert.equal((await api(access)).status, 404);

    await setUserState(kc, CAROL.name, 'Disabled');
    await waitFor(
      'disabled user’s token refused',
      async () => ((await api(access)).status === 401 ? true : undefined),
      {
        timeoutMs: 2000,
      },
    );
    const again = await passwordLogin(server.url, CAROL.name, CAROL.password);
    assert.equal(again.status, 400);
    assert.equal(again.body['error'], 'invalid_grant');
    assert.match(String(again.body['error_description']), /disabled/);
    const refresh = await postForm(`${server.url}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: login.body['refresh_token'] as string,
      client_id: 'platform',
      client_secret: 'platform',
    });
    assert.equal(refresh.status, 400);

    await setUserState(kc, CAROL.name, 'Active');
    await waitFor('re-enabled user logs in', async () =>
      (await passwordLogin(server.url, CAROL.name, CAROL.password)).status === 200 ? true : undefined,
    );
  });

  test('a deleted user’s tokens are refused', async () => {
    const user = { name: 'flow-dave', password: 'dave-Pa55word!', groups: [] };
    await createUser(kc, user);
    // A user created a moment ago can log in as soon as the server's watch has delivered it.
    const login = await waitFor('new user logs in', async () => {
      const res = await passwordLogin(server.url, user.name, user.password);
      return res.status === 200 ? res : undefined;
    });
    const access = login.body['access_token'] as string;
    await deleteUser(kc, user.name);
    await waitFor(
      'deleted user’s token refused',
      async () => ((await api(access)).status === 401 ? true : undefined),
      {
        timeoutMs: 2000,
      },
    );
    await deleteUsersAndSessions(kc, [user.name]);
  });

  test('a change of a user’s groups reaches the tokens already issued', async () => {
    const user = { name: 'flow-frank', password: 'frank-Pa55word!', groups: ['before'] };
    await createUser(kc, user);
    try {
      const login = await waitFor('new user logs in', async () => {
        const res = await passwordLogin(server.url, user.name, user.password);
        return res.status === 200 ? res : undefined;
      });
      const access = login.body['access_token'] as string;
      const groupsNow = async () => {
        const info = await fetch(`${server.url}/oauth/userinfo`, {
          headers: { Authorization: `Bearer ${access}` },
        });
        assert.equal(info.status, 200);
        return ((await info.json()) as { groups: string[] }).groups;
      };
      // Asked twice: the second answer may come from what the server kept of the first.
      assert.deepEqual(await groupsNow(), ['before', 'system:authenticated']);
      assert.deepEqual(await groupsNow(), ['before', 'system:authenticated']);
      await runWithStdin(
        kubectl,
        [
          `--kubeconfig=${kubeconfigPath}`,
          'patch',
          'users.iam.platform.io',
          user.name,
          '--type=merge',
          '--patch={"spec":{"groups":["after"]}}',
        ],
        '',
      );
      await waitFor('the token carries the new groups', async () => {
        const groups = await groupsNow();
        return groups.join() === 'after,system:authenticated' ? true : undefined;
      });
    } finally {
      await deleteUsersAndSessions(kc, [user.name]);
    }
  });

  test('a user written by the CLI and applied with kubectl can log in', async () => {
    const name = 'flow-cli-user';
    const manifest = await runWithStdin(
      process.execPath,
      [CLI, 'user', 'create', name, '--email', 'cli@flow.example', '--group', 'cli-group', '--cost', '10'],
      'cli-Pa55word!\n',
    );
    assert.match(manifest, /password: \$2b\$10\$/);
    assert.ok(!manifest.includes('cli-Pa55word!'));
    try {
      await runWithStdin(kubectl, [`--kubeconfig=${kubeconfigPath}`, 'apply', '-f', '-'], manifest);
      const login = await waitFor('CLI-created user logs in', async () => {
        const res = await passwordLogin(server.url, name, 'cli-Pa55word!');
        return res.status === 200 ? res : undefined;
      });
      const info = await fetch(`${server.url}/oauth/userinfo`, {
        headers: { Authorization: `Bearer ${login.body['access_token'] as string}` },
      });
      assert.deepEqual(((await info.json()) as { groups: string[] }).groups, [
        'cli-group',
        'system:authenticated',
      ]);
      // `keys kid` names the key the server signs with.
      const kid = (await runWithStdin(process.execPath, [CLI, 'keys', 'kid', keys.es256], '')).trim();
      assert.equal(decodeProtectedHeader(login.body['access_token'] as string).kid, kid);
    } finally {
      await deleteUsersAndSessions(kc, [name]);
    }
  });

  test('the CRD refuses a plaintext password', async () => {
    await assert.rejects(
      kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
        group: 'iam.platform.io',
        version: 'v1alpha2',
        plural: 'users',
        body: {
          apiVersion: 'iam.platform.io/v1alpha2',
          kind: 'User',
          metadata: { name: 'flow-plaintext' },
          spec: { password: 'hunter2' },
        },
      }),
      (err: { code?: number; body?: string }) => {
        assert.equal(err.code, 422);
        assert.match(String(err.body), /spec\.password/);
        return true;
      },
    );
  });

  test('expired sessions are deleted by the sweeper', async () => {
    const api = kc.makeApiClient(CustomObjectsApi);
    const ref = { group: 'iam.platform.io', version: 'v1alpha2', plural: 'sessions' };
    await api.createClusterCustomObject({
      ...ref,
      body: {
        apiVersion: 'iam.platform.io/v1alpha2',
        kind: 'Session',
        metadata: { name: 'flow-expired-session' },
        spec: {
          username: ALICE.name,
          userUID: 'x',
          clientId: 'platform',
          refreshTokenId: 'x',
          expiresAt: new Date(Date.now() - 1000).toISOString(),
        },
      },
    });
    await waitFor(
      'expired session deleted',
      async () =>
        (await listSessions(kc, ALICE.name)).some((s) => s.metadata.name === 'flow-expired-session')
          ? undefined
          : true,
      { timeoutMs: 5000 },
    );
  });

  test('no password, token or key material appears in the logs', () => {
    const output = server.output().join('\n');
    for (const secret of [ALICE.password, BOB.password, CAROL.password]) assert.ok(!output.includes(secret));
    assert.ok(!/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/.test(output), 'no JWT in the logs');
    assert.ok(!output.includes('PRIVATE KEY'));
    const logins = server.logs().filter((l) => l['message'] === 'login');
    assert.ok(
      logins.some(
        (l) => l['outcome'] === 'success' && l['user'] === ALICE.name && l['client'] === 'platform',
      ),
    );
  });
});
