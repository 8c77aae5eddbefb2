// Two server processes sharing one cluster, as two replicas behind a Service. They are also mid key
// rotation: A signs with the old key and already accepts the new one, B signs with the new key and still
// accepts the old one — so every cross-replica check here also proves rotation without logging anyone out.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  installIamCrds,
  startReadyServer,
  listSessions,
  passwordLogin,
  postForm,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const USER = { name: 'replicas-rita', password: 'rita-Pa55word!', groups: ['developers'] };
const SOLO = { name: 'replicas-sam', password: 'sam-Pa55word!', groups: [] as string[] };
const CLIENT = { client_id: 'platform', client_secret: 'platform' };
const GRACE_SECONDS = 2;

describe('two replicas sharing one cluster', () => {
  let kc: KubeConfig;
  let a: ServerProcess;
  let b: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;

  const api = (server: ServerProcess, token: string) =>
    fetch(`${server.url}/kapis/replicas-test/v1/things`, {
      headers: { Authorization: `Bearer ${token}` },
    }).then((r) => r.status);
  const refresh = (server: ServerProcess, refreshToken: string) =>
    postForm(`${server.url}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      ...CLIENT,
    });

  before(async () => {
    const cp = await testControlPlane();
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [USER.name, SOLO.name]);
    await createUser(kc, USER);
    await createUser(kc, SOLO);
    keys = generateTestKeys();
    const common = [
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      '--auth.addressRequestsPerMinute=0',
      `--auth.refreshGraceSeconds=${GRACE_SECONDS}`,
    ];
    [a, b] = await Promise.all([
      startReadyServer([
        ...common,
        `--auth.signingKeyFile=${keys.es256}`,
        `--auth.verificationKeyFiles=${keys.es256Next}`,
      ]),
      startReadyServer([
        ...common,
        `--auth.signingKeyFile=${keys.es256Next}`,
        `--auth.verificationKeyFiles=${keys.es256}`,
        '--auth.singleSession=true',
      ]),
    ]);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await deleteUsersAndSessions(kc, [USER.name, SOLO.name]);
    keys?.cleanup();
  });

  test('a token issued by one replica is accepted by the other at once', async () => {
    for (let i = 0; i < 5; i++) {
      const login = await passwordLogin(a.url, USER.name, USER.password);
      assert.equal(login.status, 200);
      // No wait: B reads the new session through to the apiserver if its watch has not delivered it yet.
      assert.equal(await api(b, login.body['access_token'] as string), 404);
    }
    const fromB = await passwordLogin(b.url, USER.name, USER.password);
    assert.equal(await api(a, fromB.body['access_token'] as string), 404);
  });

  test('the replicas sign with different keys and each accepts the other’s (rotation in progress)', async () => {
    // B runs in single-session mode: log in there first, or it would end the session from A.
    const fromB = await passwordLogin(b.url, USER.name, USER.password);
    const fromA = await passwordLogin(a.url, USER.name, USER.password);
    const kidA = decodeProtectedHeader(fromA.body['access_token'] as string).kid;
    const kidB = decodeProtectedHeader(fromB.body['access_token'] as string).kid;
    assert.notEqual(kidA, kidB);
    const jwks = (await (await fetch(`${a.url}/oauth/keys`)).json()) as { keys: { kid: string }[] };
    assert.deepEqual(jwks.keys.map((k) => k.kid).sort(), [kidA, kidB].sort());
    assert.equal(await api(a, fromB.body['access_token'] as string), 404);
    assert.equal(await api(b, fromA.body['access_token'] as string), 404);
  });

  test('a logout on one replica is refused on the other within 2 s', async () => {
    const login = await passwordLogin(a.url, USER.name, USER.password);
    const access = login.body['access_token'] as string;
    assert.equal(await api(b, access), 404);
    const logout = await fetch(`${a.url}/oauth/logout`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${access}` },
    });
    assert.equal(logout.status, 200);
    const started = Date.now();
    await waitFor(
      'logged-out token refused by the other replica',
      async () => ((await api(b, access)) === 401 ? true : undefined),
      {
        timeoutMs: 2000,
        intervalMs: 20,
      },
    );
    assert.ok(Date.now() - started < 2000);
    assert.equal((await refresh(b, login.body['refresh_token'] as string)).status, 400);
  });

  test('a refresh on one replica is honoured by the other right away', async () => {
    const login = await passwordLogin(a.url, USER.name, USER.password);
    let refreshToken = login.body['refresh_token'] as string;
    for (const server of [b, a, b, a]) {
      const res = await refresh(server, refreshToken);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      refreshToken = res.body['refresh_token'] as string;
      assert.equal(await api(server === a ? b : a, res.body['access_token'] as string), 404);
    }
  });

  test('the same refresh token sent to both replicas at once: both answers are valid for the same session', async () => {
    for (let round = 0; round < 5; round++) {
      const login = await passwordLogin(a.url, USER.name, USER.password);
      const sid = decodeJwt(login.body['access_token'] as string)['sid'];
      const token = login.body['refresh_token'] as string;
      const results = await Promise.all([refresh(a, token), refresh(b, token)]);
      assert.deepEqual(
        results.map((r) => r.status),
        [200, 200],
        JSON.stringify(results.map((r) => r.body)),
      );
      // One rotation happened; the repeat got the session's current refresh token signed again.
      const refreshIds = results.map((r) => decodeJwt(r.body['refresh_token'] as string).jti);
      assert.equal(refreshIds[0], refreshIds[1]);
      for (const r of results) {
        assert.equal(decodeJwt(r.body['access_token'] as string)['sid'], sid);
        assert.equal(await api(a, r.body['access_token'] as string), 404);
        assert.equal(await api(b, r.body['access_token'] as string), 404);
      }
      // Either answer's refresh token carries the session on.
      const next = await refresh(round % 2 ? a : b, results[round % 2]!.body['refresh_token'] as string);
      assert.equal(next.status, 200, JSON.stringify(next.body));
    }
  });

  test('a spent refresh token repeated after the grace window still revokes the session', async () => {
    const login = await passwordLogin(a.url, USER.name, USER.password);
    const spent = login.body['refresh_token'] as string;
    const rotated = await refresh(a, spent);
    assert.equal(rotated.status, 200);
    const sid = String(decodeJwt(spent)['sid']);
    const session = (await listSessions(kc, USER.name)).find((s) => s.metadata.name === sid) as unknown as {
      spec: { rotatedAt: string };
    };
    // The window is measured from the rotation the cluster recorded.
    await waitFor(
      'grace window over',
      async () =>
        Date.now() > Date.parse(session.spec.rotatedAt) + GRACE_SECONDS * 1000 + 50 ? true : undefined,
      { timeoutMs: (GRACE_SECONDS + 5) * 1000, intervalMs: 100 },
    );
    const reuse = await refresh(b, spent);
    assert.equal(reuse.status, 400);
    assert.equal(reuse.body['error'], 'invalid_grant');
    assert.match(String(reuse.body['error_description']), /already used/);
    await waitFor('session of a reused refresh token revoked', async () =>
      (await api(a, rotated.body['access_token'] as string)) === 401 ? true : undefined,
    );
    assert.equal((await refresh(a, rotated.body['refresh_token'] as string)).status, 400);
  });

  test('single-session mode: a new login on B ends the user’s earlier sessions', async () => {
    const first = await passwordLogin(a.url, SOLO.name, SOLO.password);
    assert.equal(await api(a, first.body['access_token'] as string), 404);
    await waitFor('B has seen the first session', async () =>
      (await listSessions(kc, SOLO.name)).length === 1 ? true : undefined,
    );
    // B's cache must list the first session to end it; its watch delivers within milliseconds.
    await waitFor('new login on B ends the old session', async () => {
      const second = await passwordLogin(b.url, SOLO.name, SOLO.password);
      assert.equal(second.status, 200);
      return (await api(a, first.body['access_token'] as string)) === 401 ? true : undefined;
    });
    const remaining = await listSessions(kc, SOLO.name);
    assert.equal(remaining.length, 1);
  });
});
