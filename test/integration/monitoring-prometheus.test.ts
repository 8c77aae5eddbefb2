import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { freePort } from '../cluster/free-port.ts';
import type { ServerProcess } from '../support/server-process.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import { clusterOpenMetrics, type ClusterData } from '../support/monitoring-data.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { installTenantCrds } from '../support/tenant-fixtures.ts';
import { RECORDING_RULES, startTestPrometheus, type TestPrometheus } from '../support/test-prometheus.ts';
import { promtoolPath } from '../tools/promtool.ts';
import { runNginx } from '../support/nginx.ts';
import { makeServingCertificate } from '../support/test-certificates.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const P = 'monpr';
const NS_A = 'mon-pa';
const NS_B = 'mon-pb';
const ADMIN = { name: 'mon-admin', password: 'Adm1n-Pa55word!', groups: [] as string[] };
const MEMBER = { name: 'mon-member', password: 'Memb3r-Pa55word!', groups: [] as string[] };
const READER_ROLE = 'mon-pr-reader';

// The series lie ahead of now, after the namespaces' creation: the original answers nothing for a
// namespace before it existed, and so does this server.
const now = Math.floor(Date.now() / 1000);
const S = Math.ceil(now / 600) * 600 + 600;
const T = S + 1200;

const CLUSTER: ClusterData = {
  start: S,
  end: S + 1800,
  intervalSeconds: 30,
  nodes: [
    { name: 'n1', cpus: 4, busy: 0.25, memoryTotal: 8e9, memoryAvailable: 6e9, podCapacity: 110 },
    { name: 'n2', cpus: 2, busy: 0.75, memoryTotal: 4e9, memoryAvailable: 1e9, podCapacity: 110 },
    { name: 'n3', cpus: 8, busy: 0.25, memoryTotal: 16e9, memoryAvailable: 8e9, podCapacity: 110 },
  ],
  namespaces: [
    { name: NS_A, workspace: 'mon-ws1' },
    { name: NS_B, workspace: 'mon-ws2' },
  ],
  pods: [
    pod(NS_A, 'web-5d8f7c9b4-a1', 'n1', 'ReplicaSet', 'web-5d8f7c9b4', 0.125, 1e8),
    pod(NS_A, 'web-5d8f7c9b4-b2', 'n2', 'ReplicaSet', 'web-5d8f7c9b4', 0.25, 2e8),
    pod(NS_A, 'db-0', 'n3', 'StatefulSet', 'db', 0.5, 4e8),
    pod(NS_B, 'batch-x', 'n1', 'Job', 'batch', 1, 8e8),
  ],
};

function pod(
  namespace: string,
  name: string,
  node: string,
  ownerKind: string,
  ownerName: string,
  cpu: number,
  ws: number,
) {
  return {
    namespace,
    name,
    node,
    ownerKind,
    ownerName,
    phase: 'Running' as const,
    cpu,
    memoryWorkingSet: ws,
    memoryUsage: 2 * ws,
  };
}

interface Value {
  metric?: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
  min_value?: string;
}
interface Result {
  metric_name?: string;
  data: { resultType?: string; result?: Value[] };
  error?: string;
}
interface Answer {
  results: Result[];
  page?: number;
  total_page?: number;
  total_item?: number;
}

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);

async function cleanup(): Promise<void> {
  await deleteUsersAndSessions(kc, [ADMIN.name, MEMBER.name], P);
  for (const name of [NS_A, NS_B]) await core.deleteNamespace({ name }).catch(() => undefined);
  await rbac.deleteClusterRoleBinding({ name: READER_ROLE }).catch(() => undefined);
  await rbac.deleteClusterRole({ name: READER_ROLE }).catch(() => undefined);
}

describe('monitoring API on a real Prometheus (backfilled series, shipped recording rules)', () => {
  let prometheus: TestPrometheus;
  let server: ServerProcess;
  let adminToken: string;
  let memberToken: string;
  const base = `/kapis/monitoring.${P}.io/v1alpha3`;
  const get = (path: string, token = adminToken) =>
    fetch(`${server.url}${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  const answer = async (path: string, token = adminToken): Promise<Answer> => {
    const res = await get(path, token);
    assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
    return (await res.json()) as Answer;
  };
  /** metric name → { resource label value → sample value } */
  const byResource = (body: Answer, label: string) =>
    Object.fromEntries(
      body.results.map((r) => [
        r.metric_name,
        Object.fromEntries((r.data.result ?? []).map((v) => [v.metric?.[label] ?? '', v.value?.[1]])),
      ]),
    );

  before(async () => {
    await installIamCrds(kc, P);
    await installTenantCrds(kc, P);
    await cleanup();
    for (const name of [NS_A, NS_B]) await core.createNamespace({ body: { metadata: { name } } });
    await createUser(kc, ADMIN, P);
    await createUser(kc, MEMBER, P);
    await rbac.createClusterRole({
      body: {
        metadata: { name: READER_ROLE },
        rules: [{ apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['get', 'list'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: READER_ROLE },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: READER_ROLE },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: ADMIN.name }],
      },
    });
    // The project member may list pods in NS_A only.
    await rbac.createNamespacedRoleBinding({
      namespace: NS_A,
      body: {
        metadata: { name: 'mon-member' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: READER_ROLE },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: MEMBER.name }],
      },
    });
    prometheus = await startTestPrometheus({
      openMetrics: clusterOpenMetrics(CLUSTER),
      rules: { file: RECORDING_RULES, start: CLUSTER.start, end: CLUSTER.end, evalIntervalSeconds: 60 },
    });
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P}`,
      `--monitoring.endpoint=${prometheus.url}`,
      '--monitoring.maxPointsPerQuery=100',
      '--monitoring.cacheTtlSeconds=30',
    ]);
    const login = async (user: typeof ADMIN) => {
      const res = await passwordLogin(server.url, user.name, user.password, { id: P, secret: P });
      assert.equal(res.status, 200);
      return String(res.body['access_token']);
    };
    adminToken = await login(ADMIN);
    memberToken = await login(MEMBER);
  });
  after(async () => {
    await server?.stop();
    await prometheus?.stop();
    await cleanup();
  });

  test('the shipped rules file passes promtool check rules', () => {
    const check = spawnSync(promtoolPath(), ['check', 'rules', RECORDING_RULES], { encoding: 'utf8' });
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /SUCCESS: 90 rules found/);
  });

  test('nodes, instant: exact values per node, in the original shape', async () => {
    const body = await answer(
      `/nodes?time=${T}&metrics_filter=node_cpu_utilisation|node_cpu_total|node_cpu_usage|node_memory_utilisation|node_memory_total$`,
    );
    assert.deepEqual(
      body.results.map((r) => r.metric_name),
      [
        'node_cpu_utilisation',
        'node_cpu_total',
        'node_cpu_usage',
        'node_memory_utilisation',
        'node_memory_total',
      ],
    );
    assert.deepEqual(byResource(body, 'node'), {
      node_cpu_utilisation: { n1: '0.25', n2: '0.75', n3: '0.25' },
      node_cpu_total: { n1: '4', n2: '2', n3: '8' },
      node_cpu_usage: { n1: '1', n2: '1.5', n3: '2' },
      node_memory_utilisation: { n1: '0.25', n2: '0.75', n3: '0.5' },
      node_memory_total: { n1: '8000000000', n2: '4000000000', n3: '16000000000' },
    });
    const first = body.results[0]!;
    assert.equal(first.data.resultType, 'vector');
    assert.equal(first.data.result![0]!.value![0], T);
    // The metering members the original always writes, empty.
    assert.equal(first.data.result![0]!.min_value, '');
    assert.equal(body.page, undefined);
  });

  test('metrics_filter is a regular expression searched in each name, as the original matches it', async () => {
    const body = await answer(
      `/nodes/n2?time=${T}&metrics_filter=${encodeURIComponent('cpu_(total|usage)')}`,
    );
    assert.deepEqual(
      body.results.map((r) => r.metric_name),
      ['node_cpu_total', 'node_cpu_usage'],
    );
    assert.deepEqual(byResource(body, 'node'), {
      node_cpu_total: { n2: '2' },
      node_cpu_usage: { n2: '1.5' },
    });
  });

  test('the cluster: sums over the nodes', async () => {
    const body = await answer(
      `/cluster?time=${T}&metrics_filter=cluster_cpu_total|cluster_cpu_usage|cluster_memory_total|cluster_node_total$`,
    );
    assert.deepEqual(byResource(body, ''), {
      cluster_cpu_total: { '': '14' },
      // :node_cpu_utilisation:avg1m is the mean over the 14 CPUs: (4×.25 + 2×.75 + 8×.25) / 14.
      cluster_cpu_usage: { '': '4.5' },
      cluster_memory_total: { '': '28000000000' },
      cluster_node_total: { '': '3' },
    });
  });

  test('a range: a matrix of step-spaced points', async () => {
    const body = await answer(
      `/nodes/n1?start=${T - 600}&end=${T}&step=300s&metrics_filter=node_cpu_utilisation$`,
    );
    const result = body.results[0]!;
    assert.equal(result.data.resultType, 'matrix');
    // A plain selector keeps its name, as Prometheus answers it and the original passes it on.
    assert.deepEqual(result.data.result![0]!.metric, {
      __name__: 'node:node_cpu_utilisation:avg1m',
      node: 'n1',
      host_ip: '10.0.0.1',
    });
    assert.deepEqual(result.data.result![0]!.values, [
      [T - 600, '0.25'],
      [T - 300, '0.25'],
      [T, '0.25'],
    ]);
  });

  test('ranking (the nodes page): sorted by one metric, every metric in the same rows, paged', async () => {
    const q = `time=${T}&type=rank&metrics_filter=node_cpu_usage|node_cpu_total$&sort_metric=node_cpu_usage`;
    const page1 = await answer(`/nodes?${q}&sort_type=desc&page=1&limit=2`);
    const rows = (body: Answer, metric: string) =>
      body.results
        .find((r) => r.metric_name === metric)!
        .data.result!.map((v) => [v.metric!['node'], v.value![1]]);
    assert.deepEqual(rows(page1, 'node_cpu_usage'), [
      ['n3', '2'],
      ['n2', '1.5'],
    ]);
    assert.deepEqual(rows(page1, 'node_cpu_total'), [
      ['n3', '8'],
      ['n2', '2'],
    ]);
    assert.equal(page1.page, 1);
    assert.equal(page1.total_page, 2);
    assert.equal(page1.total_item, 3);
    const page2 = await answer(`/nodes?${q}&sort_type=desc&page=2&limit=2`);
    assert.deepEqual(rows(page2, 'node_cpu_usage'), [['n1', '1']]);
    assert.equal(page2.page, 2);
    const asc = await answer(`/nodes?${q}&sort_type=asc&limit=2`);
    assert.deepEqual(rows(asc, 'node_cpu_usage'), [
      ['n1', '1'],
      ['n2', '1.5'],
    ]);
    assert.equal((await get(`/nodes?${q}&page=0`)).status, 400);
  });

  test("a project's pods, workloads and the project itself", async () => {
    const pods = await answer(
      `/namespaces/${NS_A}/pods?time=${T}&metrics_filter=pod_cpu_usage|pod_memory_usage_wo_cache$`,
    );
    assert.deepEqual(byResource(pods, 'pod'), {
      pod_cpu_usage: { 'web-5d8f7c9b4-a1': '0.125', 'web-5d8f7c9b4-b2': '0.25', 'db-0': '0.5' },
      pod_memory_usage_wo_cache: {
        'web-5d8f7c9b4-a1': '100000000',
        'web-5d8f7c9b4-b2': '200000000',
        'db-0': '400000000',
      },
    });
    const web = await answer(
      `/namespaces/${NS_A}/workloads/deployment/web/pods?time=${T}&metrics_filter=pod_cpu_usage$`,
    );
    assert.deepEqual(byResource(web, 'pod'), {
      pod_cpu_usage: { 'web-5d8f7c9b4-a1': '0.125', 'web-5d8f7c9b4-b2': '0.25' },
    });
    const workloads = await answer(
      `/namespaces/${NS_A}/workloads?time=${T}&metrics_filter=workload_cpu_usage$`,
    );
    assert.deepEqual(byResource(workloads, 'workload'), {
      workload_cpu_usage: { 'Deployment:web': '0.375', 'StatefulSet:db': '0.5' },
    });
    const project = await answer(
      `/namespaces/${NS_A}?time=${T}&metrics_filter=namespace_cpu_usage|namespace_memory_usage_wo_cache$`,
    );
    assert.deepEqual(byResource(project, 'namespace'), {
      namespace_cpu_usage: { [NS_A]: '0.875' },
      namespace_memory_usage_wo_cache: { [NS_A]: '700000000' },
    });
  });

  test('before the project existed: every metric of the level, without data', async () => {
    const body = await answer(`/namespaces/${NS_A}?time=${now - 3600}&metrics_filter=namespace_cpu_usage$`);
    assert.ok(body.results.length > 20);
    assert.ok(body.results.every((r) => Object.keys(r.data).length === 0 && r.error === undefined));
    assert.equal((await get(`/namespaces/mon-no-such?time=${T}`)).status, 400);
  });

  test('a project member sees that project, not another one nor the cluster', async () => {
    const own = await answer(`/namespaces/${NS_A}/pods?time=${T}&metrics_filter=pod_cpu_usage$`, memberToken);
    assert.equal(Object.keys(byResource(own, 'pod')['pod_cpu_usage']!).length, 3);
    for (const path of [
      `/namespaces/${NS_B}/pods?time=${T}&metrics_filter=pod_cpu_usage$`,
      `/nodes?time=${T}&metrics_filter=node_cpu_usage$`,
      `/cluster?time=${T}&metrics_filter=cluster_cpu_usage$`,
      `/pods?time=${T}&metrics_filter=pod_cpu_usage$`,
      `/targets/query?time=${T}&expr=up`,
    ])
      assert.equal((await get(path, memberToken)).status, 403, path);
  });

  test("the project's custom query reads only the project's series, whatever the caller's matchers", async () => {
    const query = async (expr: string, token: string, namespace?: string) => {
      const path = `${namespace ? `/namespaces/${namespace}` : ''}/targets/query?time=${T}&expr=${encodeURIComponent(expr)}`;
      const res = await get(path, token);
      assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
      return (await res.json()) as Result;
    };
    const value = (r: Result) => r.data.result?.[0]?.value?.[1];
    // Cluster-wide, for whom may list every pod: 4 pods and 3 node_exporter pods.
    assert.equal(value(await query('count(kube_pod_info)', adminToken)), '7');
    assert.equal(value(await query('count(kube_pod_info)', memberToken, NS_A)), '3');
    // The caller's namespace matchers are replaced by the server's.
    assert.equal(value(await query(`count(kube_pod_info{namespace="${NS_B}"})`, memberToken, NS_A)), '3');
    assert.equal(
      value(await query('count(kube_pod_info{namespace=~".+"}) by (namespace)', memberToken, NS_A)),
      '3',
    );
    const spread = await query(
      'sum by (namespace) ({__name__="kube_pod_info"} or kube_pod_owner)',
      memberToken,
      NS_A,
    );
    assert.deepEqual(
      spread.data.result!.map((v) => v.metric!['namespace']),
      [NS_A],
    );
    // Another project's query route: 403.
    assert.equal((await get(`/namespaces/${NS_B}/targets/query?time=${T}&expr=up`, memberToken)).status, 403);
    // A bad query: Prometheus' message as the error, 200 as the original.
    const bad = await query('sum(', adminToken);
    assert.match(bad.error ?? '', /^bad_data: /);
  });

  test('a range over the point limit is a 400 naming it, and Prometheus is not asked', async () => {
    const before = await prometheus.queriesServed();
    const res = await get(`/nodes?start=${T - 1000}&end=${T}&step=1s&metrics_filter=node_cpu_usage$`);
    assert.equal(res.status, 400);
    assert.match(
      ((await res.json()) as { message: string }).message,
      /limit is 100 \(monitoring\.maxPointsPerQuery\)/,
    );
    assert.equal(await prometheus.queriesServed(), before);
  });

  test('an https Prometheus behind a bearer token: the CA and token files are used', async () => {
    const tls = makeServingCertificate();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mon-token-'));
    const tokenFile = path.join(dir, 'token');
    writeFileSync(tokenFile, 'mon-s3cret\n');
    // A real nginx terminating TLS and refusing any other token, in front of the test Prometheus.
    const proxy = await runNginx(
      (port) => `
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${tls.certFile};
    ssl_certificate_key ${tls.keyFile};
    location / {
      if ($http_authorization != "Bearer mon-s3cret") { return 401; }
      proxy_pass ${prometheus.url};
    }
  }`,
    );
    const endpoint = `https://127.0.0.1:${proxy.port}`;
    const servers: ServerProcess[] = [];
    try {
      const ask = async (args: string[]) => {
        const s = await startReadyServer([
          `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
          `--platformName=${P}`,
          `--monitoring.endpoint=${endpoint}`,
          ...args,
        ]);
        servers.push(s);
        const login = await passwordLogin(s.url, ADMIN.name, ADMIN.password, { id: P, secret: P });
        const res = await fetch(`${s.url}${base}/nodes/n1?time=${T}&metrics_filter=node_cpu_total$`, {
          headers: { Authorization: `Bearer ${String(login.body['access_token'])}` },
        });
        assert.equal(res.status, 200);
        return ((await res.json()) as Answer).results[0]!;
      };
      const ok = await ask([
        `--monitoring.caFile=${tls.caFile}`,
        `--monitoring.bearerTokenFile=${tokenFile}`,
      ]);
      assert.equal(ok.error, undefined);
      assert.equal(ok.data.result?.[0]?.value?.[1], '4');
      const noToken = await ask([`--monitoring.caFile=${tls.caFile}`]);
      assert.equal(noToken.error, 'Prometheus answered 401 without a JSON body');
      const noCa = await ask([`--monitoring.bearerTokenFile=${tokenFile}`]);
      assert.match(noCa.error ?? '', /^cannot reach Prometheus: /);
    } finally {
      for (const s of servers) await s.stop();
      await proxy.stop();
      tls.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('ten consoles asking the same page at once cost Prometheus one query per metric', async () => {
    const before = await prometheus.queriesServed();
    const path = `/nodes?time=${T - 60}&metrics_filter=node_cpu_usage|node_memory_total$`;
    const bodies = await Promise.all(Array.from({ length: 10 }, () => answer(path)));
    assert.equal(await prometheus.queriesServed(), before + 2);
    for (const b of bodies) assert.deepEqual(b, bodies[0]);
  });
});

describe('monitoring API with Prometheus down or slow (real server)', () => {
  let server: ServerProcess;
  let token: string;
  let silent: net.Server;
  const sockets = new Set<net.Socket>();
  const P2 = 'monpd';
  const USER = { name: 'mon-down', password: 'D0wn-Pa55word!', groups: [] as string[] };
  const base = `/kapis/monitoring.${P2}.io/v1alpha3`;

  before(async () => {
    await installIamCrds(kc, P2);
    await deleteUsersAndSessions(kc, [USER.name], P2);
    await createUser(kc, USER, P2);
    await rbac.deleteClusterRoleBinding({ name: 'mon-down' }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: 'mon-down' }).catch(() => undefined);
    await rbac.createClusterRole({
      body: {
        metadata: { name: 'mon-down' },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'mon-down' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'mon-down' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: USER.name }],
      },
    });
    // Accepts connections and never answers: a Prometheus that hangs.
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P2}`,
      `--monitoring.endpoint=http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`,
      '--monitoring.queryTimeoutSeconds=1',
    ]);
    const login = await passwordLogin(server.url, USER.name, USER.password, { id: P2, secret: P2 });
    token = String(login.body['access_token']);
  });
  after(async () => {
    await server?.stop();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    await deleteUsersAndSessions(kc, [USER.name], P2);
    await rbac.deleteClusterRoleBinding({ name: 'mon-down' }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: 'mon-down' }).catch(() => undefined);
  });

  const get = (path: string) =>
    fetch(`${server.url}${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });

  test('a hanging Prometheus: each metric carries the timeout within it; the rest of the API answers', async () => {
    const started = Date.now();
    const res = await get('/pods?metrics_filter=pod_cpu_usage|pod_memory_usage$');
    assert.equal(res.status, 200);
    const body = (await res.json()) as Answer;
    assert.ok(Date.now() - started < 3000, `answered after ${Date.now() - started} ms`);
    assert.deepEqual(
      body.results.map((r) => [r.metric_name, r.error]),
      [
        ['pod_cpu_usage', 'Prometheus did not answer within 1s'],
        ['pod_memory_usage', 'Prometheus did not answer within 1s'],
      ],
    );
    assert.equal((await get('/kubesphere')).status, 200);
  });

  test('an unreachable Prometheus: the error says so', async () => {
    const port = await freePort();
    const other = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P2}`,
      `--monitoring.endpoint=http://127.0.0.1:${port}`,
    ]);
    try {
      const login = await passwordLogin(other.url, USER.name, USER.password, { id: P2, secret: P2 });
      const res = await fetch(`${other.url}${base}/pods?metrics_filter=pod_cpu_usage$`, {
        headers: { Authorization: `Bearer ${String(login.body['access_token'])}` },
      });
      assert.equal(res.status, 200);
      const body = (await res.json()) as Answer;
      assert.equal(body.results[0]!.error, 'cannot reach Prometheus: ECONNREFUSED');
    } finally {
      await other.stop();
    }
  });
});
