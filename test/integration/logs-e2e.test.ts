// The log API end to end through the real server process: configured by --logging.* flags, callers
// authenticated by access tokens from the server's own /oauth/token, authorized by Kubernetes RBAC,
// logs from the real OpenSearch.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ControlPlane } from '../cluster/control-plane.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import { deleteLogs, seedLogs, uniquePrefix, type LogLine } from '../support/log-documents.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { testLogStore, type TestLogStore } from '../support/shared-log-store.ts';

// At module level: when this file runs alone, the private control plane's and log store's after()
// hooks belong to the whole file.
const cp: ControlPlane = await testControlPlane();
const store: TestLogStore = await testLogStore();

const run = randomBytes(3).toString('hex');
const team = `le-team-${run}`;
const other = `le-other-${run}`;
const role = `le-read-pod-logs-${run}`;
const READER = { name: `le-reader-${run}`, password: 'reader-Pa55word!', groups: [`le-readers-${run}`] };
const NOBODY = { name: `le-nobody-${run}`, password: 'nobody-Pa55word!', groups: [] as string[] };

const T = Date.UTC(2025, 4, 10, 8, 0, 0);
const LINES: LogLine[] = [
  { namespace: team, pod: 'api-0', container: 'api', timeMs: T, log: 'started\n' },
  { namespace: team, pod: 'api-0', container: 'api', timeMs: T + 1000, log: 'ERROR upstream timeout\n' },
  { namespace: team, pod: 'api-1', container: 'api', timeMs: T + 2000, log: 'ready\n' },
  { namespace: other, pod: 'db-0', container: 'db', timeMs: T + 3000, log: 'secret business\n' },
];

describe('log API through the real server, with tokens from its own /oauth/token', () => {
  const prefix = uniquePrefix('logs-e2e');
  let kc: KubeConfig;
  let server: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;
  let readerToken: string;
  let nobodyToken: string;

  const logs = (token: string | undefined, query: string) =>
    fetch(`${server.url}/kapis/tenant.platform.io/v1alpha2/logs?${query}`, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });
  const login = async (user: { name: string; password: string }) => {
    const res = await passwordLogin(server.url, user.name, user.password);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return String(res.body['access_token']);
  };

  before(async () => {
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [READER.name, NOBODY.name]);
    await createUser(kc, READER);
    await createUser(kc, NOBODY);
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    for (const name of [team, other]) await core.createNamespace({ body: { metadata: { name } } });
    await rbac.createClusterRole({
      body: {
        metadata: { name: role },
        rules: [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }],
      },
    });
    // The reader's group may read logs in the team namespace only.
    await rbac.createNamespacedRoleBinding({
      namespace: team,
      body: {
        metadata: { name: role },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: READER.groups[0]! }],
      },
    });
    await seedLogs(store.url, prefix, LINES);
    keys = generateTestKeys();
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      `--logging.hosts=${store.url}`,
      `--logging.indexPrefix=${prefix}`,
    ]);
    readerToken = await login(READER);
    nobodyToken = await login(NOBODY);
  });

  after(async () => {
    await server?.stop();
    keys?.cleanup();
    await deleteLogs(store.url, prefix);
    await deleteUsersAndSessions(kc, [READER.name, NOBODY.name]).catch(() => undefined);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.deleteClusterRole({ name: role }).catch(() => undefined);
    const core = kc.makeApiClient(CoreV1Api);
    for (const name of [team, other]) await core.deleteNamespace({ name }).catch(() => undefined);
  });

  test('a user bound in a namespace reads its logs with a token from /oauth/token', async () => {
    const res = await logs(readerToken, `namespaces=${team}&sort=asc`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { query: { total: number; records: { log: string; pod: string }[] } };
    assert.equal(body.query.total, 3);
    assert.deepEqual(
      body.query.records.map((r) => r.log),
      ['started\n', 'ERROR upstream timeout\n', 'ready\n'],
    );
    const stats = await logs(readerToken, `namespaces=${team}&operation=statistics`);
    assert.deepEqual(await stats.json(), { statistics: { containers: 2, logs: 3 } });
    const exported = await logs(readerToken, `namespaces=${team}&operation=export&log_query=error`);
    assert.equal(exported.status, 200);
    assert.equal(await exported.text(), 'ERROR upstream timeout\n');
  });

  test('time parameters in milliseconds are a 400 through the real server', async () => {
    const res = await logs(readerToken, `namespaces=${team}&start_time=${T}`);
    assert.equal(res.status, 400);
    const status = (await res.json()) as { message: string };
    assert.match(status.message, /^start_time .*seconds.*milliseconds/);
  });

  test('other namespaces and cluster-wide queries are refused (403 naming them); no token is a 401', async () => {
    const res = await logs(readerToken, `namespaces=${team},${other}`);
    assert.equal(res.status, 403);
    const message = ((await res.json()) as { message: string }).message;
    assert.match(message, new RegExp(`"${other}"`));
    assert.match(message, new RegExp(`User "${READER.name}"`));
    assert.equal((await logs(readerToken, 'operation=statistics')).status, 403);
    assert.equal((await logs(nobodyToken, `namespaces=${team}`)).status, 403);
    assert.equal((await logs(undefined, `namespaces=${team}`)).status, 401);
  });

  test('the removed logging group answers 404 to authenticated callers, 401 to anonymous ones', async () => {
    const path = `/kapis/logging.platform.io/v1alpha2/namespaces/${team}/pods/api-0`;
    const res = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${readerToken}` } });
    assert.equal(res.status, 404);
    assert.match(((await res.json()) as { message: string }).message, /tenant\.platform\.io\/v1alpha2\/logs/);
    assert.equal((await fetch(`${server.url}${path}`)).status, 401);
  });

  test('the store calls are counted on /metrics', async () => {
    // An export is counted once its cursor is released on the store, which happens after the client has
    // the whole body: wait for the count rather than read it at once.
    const metrics = await waitFor('the completed export counted', async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return /platform_logging_exports_total\{outcome="completed"\} 1/.test(text) ? text : undefined;
    });
    assert.match(metrics, /platform_logging_store_requests_total\{operation="search",outcome="ok"\} [1-9]/);
  });
});
