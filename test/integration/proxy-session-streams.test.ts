// Open streams through the proxy end with their session, on every replica: two server processes share
// the cluster as two replicas; the session ends on one, the stream is open on the other.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { fetch, WebSocket } from 'undici';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUser,
  deleteUsersAndSessions,
  generateTestKeys,
  IAM,
  installIamCrds,
  passwordLogin,
  setUserState,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const PREFIX = 'streams-';
const USERS = ['ann', 'ben', 'cid', 'dot', 'eve', 'fay'].map((n) => ({
  name: `${PREFIX}${n}`,
  password: `${n}-Pa55word!`,
  groups: [`${PREFIX}watchers`],
}));
const [ANN, BEN, CID, DOT, EVE, FAY] = USERS as [
  (typeof USERS)[0],
  (typeof USERS)[0],
  (typeof USERS)[0],
  (typeof USERS)[0],
  (typeof USERS)[0],
  (typeof USERS)[0],
];
/** What the issue asks: every stream ends within 1 s of its session's end. */
const END_WITHIN_MS = 1000;

interface OpenWatch {
  /** Everything received so far. */
  text(): string;
  /** Resolves with the time the stream ended (cleanly or not). */
  ended: Promise<number>;
  abort(): void;
}

/** A plain HTTP watch of namespaces through the proxy (every namespace change is an event). */
async function openWatch(server: ServerProcess, token: string): Promise<OpenWatch> {
  const controller = new AbortController();
  const res = await fetch(`${server.url}/api/v1/namespaces?watch=true`, {
    headers: { Authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (res.status !== 200) assert.fail(`watch refused: ${res.status} ${await res.text()}`);
  let received = '';
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>)
        received += decoder.decode(chunk, { stream: true });
    } catch {
      /* cut: also an end */
    }
    return Date.now();
  })();
  await waitFor('the watch delivers', () => (received.includes('"ADDED"') ? true : undefined));
  return { text: () => received, ended, abort: () => controller.abort() };
}

/** The session an access token names (its `sid` claim). */
function sidOf(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())['sid'] as string;
}

/** The status of a new watch opened with `token`: what a client's natural next step meets. */
async function newWatchStatus(server: ServerProcess, token: string): Promise<number> {
  const res = await fetch(`${server.url}/api/v1/namespaces?watch=true`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  await res.body?.cancel();
  return res.status;
}

async function loginToken(server: ServerProcess, user: { name: string; password: string }): Promise<string> {
  const res = await passwordLogin(server.url, user.name, user.password);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body['access_token'] as string;
}

/** Resolves with the time `promise` settled, or fails when that takes longer than `ms`. */
async function within(what: string, promise: Promise<number>, ms: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function endedMetric(server: ServerProcess, reason: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`platform_proxy_connections_ended_total{reason="${reason}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('proxied streams end with their session, on every replica', () => {
  let kc: KubeConfig;
  let a: ServerProcess;
  let b: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;

  before(async () => {
    const cp = await testControlPlane();
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    const names = USERS.map((u) => u.name);
    await deleteUsersAndSessions(kc, names);
    for (const user of USERS) await createUser(kc, user);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const ignoreExists = (err: { code?: number }) => {
      if (err.code !== 409) throw err;
    };
    await rbac
      .createClusterRole({
        body: {
          metadata: { name: `${PREFIX}namespace-watcher` },
          rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] }],
        },
      })
      .catch(ignoreExists);
    await rbac
      .createClusterRoleBinding({
        body: {
          metadata: { name: `${PREFIX}namespace-watcher` },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: `${PREFIX}namespace-watcher`,
          },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${PREFIX}watchers` }],
        },
      })
      .catch(ignoreExists);
    keys = generateTestKeys();
    // A sweep far away: expiry must be ended by the stream's own timer, not by the sweep deleting the session.
    const common = [
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      '--auth.sessionSweepIntervalSeconds=3600',
      // No test but the takeover's logs one user in more than twice.
      '--auth.maxSessionsPerUser=2',
    ];
    // One after the other, so that after() stops whichever did start; a loaded machine may start slowly.
    a = await startReadyServer(common, { startTimeoutMs: 60_000 });
    b = await startReadyServer(common, { startTimeoutMs: 60_000 });
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    if (kc) {
      await deleteUsersAndSessions(kc, [...USERS.map((u) => u.name)]);
      const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
      await rbac.deleteClusterRoleBinding({ name: `${PREFIX}namespace-watcher` }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: `${PREFIX}namespace-watcher` }).catch(() => undefined);
    }
    keys?.cleanup();
  });

  test('logout on replica B ends a watch open on replica A within 1 s', async () => {
    const token = await loginToken(a, ANN);
    const watch = await openWatch(a, token);
    const before = await endedMetric(a, 'session_ended');
    const logout = await fetch(`${b.url}/oauth/logout`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(logout.status, 200);
    const loggedOutAt = Date.now();
    const endedAt = await within('watch end after logout', watch.ended, END_WITHIN_MS);
    assert.ok(endedAt - loggedOutAt < END_WITHIN_MS);
    assert.equal(await endedMetric(a, 'session_ended'), before + 1);
    // The client's natural next step, a new watch with the same token, is refused.
    assert.equal(await newWatchStatus(a, token), 401);
  });

  test('a user disabled by an administrator loses the watches of all their sessions within 1 s', async () => {
    const onA = await openWatch(a, await loginToken(a, BEN));
    const onB = await openWatch(b, await loginToken(b, BEN));
    await setUserState(kc, BEN.name, 'Disabled');
    const disabledAt = Date.now();
    const [endA, endB] = await Promise.all([
      within('watch on A after disabling', onA.ended, END_WITHIN_MS),
      within('watch on B after disabling', onB.ended, END_WITHIN_MS),
    ]);
    assert.ok(Math.max(endA, endB) - disabledAt < END_WITHIN_MS);
    assert.ok((await endedMetric(a, 'user_disabled')) >= 1);
  });

  test('a deleted user loses their watch within 1 s', async () => {
    const watch = await openWatch(b, await loginToken(a, DOT));
    await deleteUser(kc, DOT.name);
    const deletedAt = Date.now();
    const endedAt = await within('watch end after user deletion', watch.ended, END_WITHIN_MS);
    assert.ok(endedAt - deletedAt < END_WITHIN_MS);
  });

  test('a login on B that takes the session over at the limit ends the earlier login’s watch on A within 1 s', async () => {
    const first = await loginToken(a, FAY);
    const watch = await openWatch(a, first);
    const before = await endedMetric(a, 'session_ended');
    await loginToken(a, FAY);
    // B counts the sessions its watch has shown: once it holds both, its next login takes the oldest over.
    const heir = await waitFor('a login on B takes the first session over', async () => {
      const token = await loginToken(b, FAY);
      return sidOf(token) === sidOf(first) ? token : undefined;
    });
    const tookOverAt = Date.now();
    const endedAt = await within('watch end after the takeover', watch.ended, END_WITHIN_MS);
    assert.ok(endedAt - tookOverAt < END_WITHIN_MS);
    assert.equal(await endedMetric(a, 'session_ended'), before + 1);
    assert.equal(await newWatchStatus(a, first), 401, 'the earlier login’s token is over');
    // The heir, in the same session, watches on A.
    const heirs = await openWatch(a, heir);
    heirs.abort();
  });

  test('a WebSocket watch on A (token in the subprotocol) is closed within 1 s of a logout on B', async () => {
    const token = await loginToken(b, CID);
    const ws = new WebSocket(`${a.url.replace('http', 'ws')}/api/v1/namespaces?watch=true`, {
      protocols: [
        `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`,
        'base64.binary.k8s.io',
      ],
      // As a browser sends it; the kube-apiserver's WebSocket handshake requires an Origin.
      headers: { Origin: a.url },
    });
    const events: string[] = [];
    ws.addEventListener('message', (e) =>
      events.push(typeof e.data === 'string' ? e.data : Buffer.from(e.data as ArrayBuffer).toString()),
    );
    const closed = new Promise<number>((resolve) => ws.addEventListener('close', () => resolve(Date.now())));
    try {
      await waitFor('events over the WebSocket', () => (events.length > 0 ? true : undefined));
      const logout = await fetch(`${b.url}/oauth/logout`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}` },
      });
      assert.equal(logout.status, 200);
      const loggedOutAt = Date.now();
      const closedAt = await within('WebSocket close after logout', closed, END_WITHIN_MS);
      assert.ok(closedAt - loggedOutAt < END_WITHIN_MS);
    } finally {
      ws.close();
    }
  });

  test('a watch ends within 1 s of its session’s expiry, on both replicas', async () => {
    // The shortest configurable refresh-token lifetime is 2 minutes; instead the session is given an
    // expiry 3 s away, as a session near the end of its life has (both replicas see it through their watch).
    const token = await loginToken(a, EVE);
    const onA = await openWatch(a, token);
    const onB = await openWatch(b, token);
    const objects = kc.makeApiClient(CustomObjectsApi);
    const sessionId = sidOf(token);
    const session = (await objects.getClusterCustomObject({
      ...IAM,
      plural: 'sessions',
      name: sessionId,
    })) as {
      spec: Record<string, unknown>;
    };
    const expiresAt = Math.ceil((Date.now() + 3000) / 1000) * 1000; // RFC 3339 in whole seconds
    await objects.replaceClusterCustomObject({
      ...IAM,
      plural: 'sessions',
      name: sessionId,
      body: { ...session, spec: { ...session.spec, expiresAt: new Date(expiresAt).toISOString() } },
    });
    const [endA, endB] = await Promise.all([
      within('watch on A at expiry', onA.ended, expiresAt - Date.now() + END_WITHIN_MS),
      within('watch on B at expiry', onB.ended, expiresAt - Date.now() + END_WITHIN_MS),
    ]);
    for (const endedAt of [endA, endB]) {
      assert.ok(endedAt >= expiresAt - 50, `ended ${expiresAt - endedAt} ms before the expiry`);
      assert.ok(endedAt - expiresAt < END_WITHIN_MS, `ended ${endedAt - expiresAt} ms after the expiry`);
    }
    assert.ok((await endedMetric(a, 'session_expired')) >= 1);
  });
});
