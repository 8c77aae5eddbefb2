import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { waitFor } from '../cluster/wait-for.ts';
import { startServerProcess } from '../support/server-process.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installIamCrds,
} from '../support/iam-fixtures.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

// At the top level, so a private control plane (file run alone) is stopped after all tests of the file.
const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);

/** A fresh, recognisable secret per field, so a leak names the field it came from. */
function secret(field: string): string {
  return `${field}-${randomBytes(12).toString('hex')}`;
}

/** JWT-shaped, as a stolen access token would look. */
function tokenLike(field: string): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'ES256', kid: field })}.${part({ sub: secret(field) })}.${randomBytes(32).toString('base64url')}`;
}

describe('logs never carry a secret, whatever field a client puts it in', () => {
  test('requests with secrets in headers, cookies, query strings and bodies, against every kind of route', async () => {
    await installIamCrds(kc);
    // A real user: real passwords go to the token endpoint, real tokens come back and are used.
    const rita = { name: 'redaction-rita', password: secret('rita-password'), groups: ['redaction-testers'] };
    await deleteUsersAndSessions(kc, [rita.name]);
    await createUser(kc, rita);
    const server = await startServerProcess([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      '--log.level=debug',
      '--log.access.mode=all',
    ]);
    const secrets: string[] = [];
    const s = (field: string) => {
      const value = secret(field);
      secrets.push(value);
      return value;
    };
    const t = (field: string) => {
      const value = tokenLike(field);
      secrets.push(value);
      return value;
    };
    secrets.push(rita.password);
    const responses: { label: string; requestId: string; user?: string }[] = [];
    try {
      await waitFor('server ready', async () =>
        (await fetch(`${server.url}/readyz`)).ok ? true : undefined,
      );
      const send = async (label: string, path: string, init: RequestInit = {}, user?: string) => {
        const res = await fetch(`${server.url}${path}`, init);
        const body = await res.text();
        const requestId = res.headers.get('x-request-id');
        assert.ok(requestId, `${label}: X-Request-Id answered`);
        responses.push({ label, requestId, ...(user ? { user } : {}) });
        return { res, body };
      };
      const basic = (user: string, password: string) =>
        `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      const secretHeaders = () => ({
        Authorization: `Bearer ${t('authorization')}`,
        Cookie: `session=${s('cookie')}; csrf=${s('cookie2')}`,
        'Proxy-Authorization': basic('proxyuser', s('proxy-authorization')),
        'X-Api-Key': s('x-api-key'),
        'X-Auth-Token': s('x-auth-token'),
        'X-Request-Id': t('x-request-id'),
      });
      const query = () =>
        `?token=${s('q-token')}&access_token=${s('q-access-token')}&password=${s('q-password')}&client_secret=${s('q-client-secret')}&watch=1`;

      const paths = [
        '/healthz',
        '/readyz',
        '/version',
        '/metrics',
        '/openapi/platform/v3',
        '/kapis/resources.platform.io/v1alpha3/nodes',
        '/kapis/resources.platform.io/v1alpha3/nodes/redaction-node',
        '/api/v1/namespaces/default/secrets',
        '/apis/apps/v1/deployments',
        '/no/such/route',
      ];
      for (const path of paths) await send(`GET ${path}`, `${path}${query()}`, { headers: secretHeaders() });

      const form = (fields: Record<string, string>) => ({
        method: 'POST',
        headers: { ...secretHeaders(), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      });
      await send(
        'password grant',
        '/oauth/token',
        form({
          grant_type: 'password',
          username: 'redaction-user',
          password: s('password'),
          client_id: 'platform',
          client_secret: s('client-secret'),
        }),
      );
      await send('password grant, client by Basic', '/oauth/token', {
        ...form({ grant_type: 'password', username: 'redaction-user', password: s('password-basic') }),
        headers: {
          Authorization: basic('platform', s('basic-client-secret')),
          'Content-Type': 'application/x-www-form-urlencoded',
        },
      });
      await send(
        'refresh grant',
        '/oauth/token',
        form({ grant_type: 'refresh_token', refresh_token: t('refresh-token'), client_id: 'platform' }),
      );
      await send('revoke', '/oauth/revoke', form({ token: t('revoke-token'), client_id: 'platform' }));
      await send('logout', '/oauth/logout', { method: 'POST', headers: secretHeaders() });
      await send('token as JSON', '/oauth/token', {
        method: 'POST',
        headers: { ...secretHeaders(), 'Content-Type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'password',
          username: 'redaction-user',
          password: s('json-password'),
        }),
      });
      await send('broken JSON body', '/apis/apps/v1/namespaces/default/deployments', {
        method: 'POST',
        headers: { ...secretHeaders(), 'Content-Type': 'application/json' },
        body: `{"password": "${s('broken-json')}", `,
      });
      await send(
        'oversized form body',
        '/oauth/token',
        form({ password: s('big-body'), pad: 'x'.repeat(64 * 1024) }),
      );
      await send('secret-shaped path query only', `/oauth/token?password=${s('q-token-endpoint')}`, {
        method: 'GET',
      });

      // The real thing: wrong and right passwords, then the issued tokens on every kind of route.
      const login = (password: string) =>
        form({
          grant_type: 'password',
          username: rita.name,
          password,
          client_id: 'platform',
          client_secret: 'platform',
        });
      await send('wrong password of a real user', '/oauth/token', login(s('wrong-password')));
      const issued = await send('login of a real user', '/oauth/token', login(rita.password));
      assert.equal(issued.res.status, 200, issued.body);
      const tokens = JSON.parse(issued.body) as { access_token: string; refresh_token: string };
      secrets.push(tokens.access_token, tokens.refresh_token);
      const bearer = { headers: { Authorization: `Bearer ${tokens.access_token}` } };
      for (const path of [
        `/kapis/resources.platform.io/v1alpha3/nodes?limit=1&token=${s('q-authenticated')}`,

        '/api/v1/namespaces/default/configmaps',
        '/no/such/route',
      ]) {
        await send(`authenticated GET ${path}`, path, bearer, rita.name);
      }
      // /oauth/userinfo checks the token itself (an anonymous path): its access line has no user.
      await send('userinfo with a real token', '/oauth/userinfo', bearer);
      const refreshed = await send(
        'refresh with a real refresh token',
        '/oauth/token',
        form({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: 'platform',
          client_secret: 'platform',
        }),
      );
      assert.equal(refreshed.res.status, 200, refreshed.body);
      const rotated = JSON.parse(refreshed.body) as { access_token: string; refresh_token: string };
      secrets.push(rotated.access_token, rotated.refresh_token);
      await send(
        'reuse of a spent refresh token',
        '/oauth/token',
        form({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: 'platform',
          client_secret: 'platform',
        }),
      );
      await send('logout with a real token', '/oauth/logout', {
        method: 'POST',
        headers: { Authorization: `Bearer ${rotated.access_token}` },
      });

      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      for (const value of secrets)
        assert.ok(!metrics.includes(value), `secret ${value.slice(0, 24)}… in /metrics`);
    } finally {
      await server.stop();
      await deleteUsersAndSessions(kc, [rita.name]);
    }

    const output = server.output().join('\n');
    assert.ok(output.includes('"message":"request"'), 'access lines were captured');
    const leaks = secrets.filter((value) => {
      const forms = [value, encodeURIComponent(value), Buffer.from(value).toString('base64')];
      // A secret or a recognisable piece of one (the random part) anywhere in the output.
      const randomPart = value.split(/[-.]/).find((p) => p.length >= 24) ?? value;
      return forms.some((f) => output.includes(f)) || output.includes(randomPart);
    });
    assert.deepEqual(
      leaks.map((v) => v.slice(0, 30)),
      [],
      'secrets that appear in the log output',
    );

    // One access line per request, with the fields an operator filters on.
    const logs = server.logs();
    for (const { label, requestId, user } of responses) {
      const lines = logs.filter((l) => l['message'] === 'request' && l['requestId'] === requestId);
      assert.equal(lines.length, 1, `${label}: one access line for request ${requestId}`);
      const line = lines[0]!;
      for (const field of ['time', 'level', 'method', 'route', 'path', 'status', 'durationMs']) {
        assert.ok(line[field] !== undefined, `${label}: access line has ${field}`);
      }
      assert.match(String(line['time']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(typeof line['status'], 'number');
      assert.doesNotMatch(String(line['path']), /\?/, `${label}: no query string in the access line`);
      if (user) assert.equal(line['user'], user, `${label}: the access line names the caller`);
    }
  });
});
