// The monitoring API on a real Prometheus holding a large cluster's series (backfilled, the shipped
// recording rules backfilled over them): the nodes ranking page at N nodes and a project's pods metrics
// at P pods, p50/p99 through the real server beside the same PromQL sent straight to Prometheus (all of
// a request's queries at once, as the server sends them), the two measured interleaved in the same
// rounds so that both meet the same machine load; then how many queries 20 consoles opening the
// cluster overview at once cost Prometheus, beside one console. Prints figures; asserts nothing.
//   source scripts/ensure-node.sh && node test/bench/monitoring.bench.ts [--nodes=5000] [--pods=500]
//     [--requests=300] [--rounds=3] [--consoles=20]
// 300 requests per round: a p99 of 100 is the round's one slowest request, and on a shared machine one
// stall decides it; of 300 it is the third slowest.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { expressionOf, type Scope } from '../../src/monitoring/metric-expressions.ts';
import type { Level } from '../../src/monitoring/metric-table.ts';
import { hashPassword } from '../../src/users/passwords.ts';
import { startControlPlane } from '../cluster/control-plane.ts';
import { adminKubeConfig, generateTestKeys, installIamCrds, passwordLogin } from '../support/iam-fixtures.ts';
import { clusterOpenMetrics, type ClusterData } from '../support/monitoring-data.ts';
import { RECORDING_RULES, startTestPrometheus } from '../support/test-prometheus.ts';
import { startRealServer, type RealServer } from './real-server.ts';
import { measureInterleaved, median } from './sequential-latency.ts';

const flag = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const NODES = flag('nodes', 5000);
const PODS = flag('pods', 500);
const REQUESTS = flag('requests', 300);
const ROUNDS = flag('rounds', 3);
const CONSOLES = flag('consoles', 20);
const PLATFORM = 'kubesphere';
const ADMIN = 'bench-admin';
const PASSWORD = 'bench-Pa55word!';
const PROJECT = 'bench-mon';

// Series ahead of now, after the project's creation (the API answers nothing for before it).
const now = Math.floor(Date.now() / 1000);
const start = Math.ceil(now / 600) * 600 + 600;
const T = start + 600;
const node = (i: number) => `node-${String(i).padStart(5, '0')}`;
const cluster: ClusterData = {
  start,
  end: T,
  intervalSeconds: 60,
  nodes: Array.from({ length: NODES }, (_, i) => ({
    name: node(i),
    cpus: 1,
    busy: ((i * 37) % 100) / 100,
    memoryTotal: 8e9,
    memoryAvailable: ((i * 53) % 100) * 5e7,
    podCapacity: 110,
  })),
  namespaces: [{ name: PROJECT, workspace: 'bench-ws' }],
  pods: Array.from({ length: PODS }, (_, i) => ({
    namespace: PROJECT,
    name: `app-${String(i).padStart(4, '0')}`,
    node: node(i % NODES),
    ownerKind: 'ReplicaSet',
    ownerName: `app-${i % 10}-5d8f7c9b4`,
    phase: 'Running' as const,
    cpu: ((i * 7) % 100) / 1000,
    memoryWorkingSet: 1e7 * (1 + (i % 50)),
    memoryUsage: 2e7 * (1 + (i % 50)),
  })),
};

/** The nodes page's request (console N6 with its ranking), a project's pods, the cluster overview. */
const NODE_METRICS = [
  'node_cpu_usage',
  'node_cpu_total',
  'node_cpu_utilisation',
  'node_memory_usage_wo_cache',
  'node_memory_total',
  'node_memory_utilisation',
  'node_pod_running_count',
  'node_pod_quota',
];
const POD_METRICS = ['pod_cpu_usage', 'pod_memory_usage_wo_cache'];
const CLUSTER_METRICS = [
  'cluster_cpu_usage',
  'cluster_cpu_total',
  'cluster_memory_usage_wo_cache',
  'cluster_memory_total',
  'cluster_pod_running_count',
  'cluster_pod_quota',
  'cluster_node_total',
  'cluster_namespace_count',
];
const filter = (names: string[]) => encodeURIComponent(`${names.join('|')}$`);
const NODES_PAGE = `/nodes?type=rank&time=${T}&metrics_filter=${filter(NODE_METRICS)}&sort_metric=node_cpu_utilisation&sort_type=desc&page=1&limit=10`;
const PODS_PAGE = `/namespaces/${PROJECT}/pods?time=${T}&metrics_filter=${filter(POD_METRICS)}`;
const OVERVIEW = `/cluster?time=${T}&metrics_filter=${filter(CLUSTER_METRICS)}`;

const cp = await startControlPlane();
const keys = generateTestKeys();
const dir = mkdtempSync(path.join(os.tmpdir(), 'monitoring-bench-'));
const servers: RealServer[] = [];
try {
  const kc = adminKubeConfig(cp.kubeconfigPath);
  await installIamCrds(kc, PLATFORM);
  await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
    group: `iam.${PLATFORM}.io`,
    version: 'v1alpha2',
    plural: 'users',
    body: {
      apiVersion: `iam.${PLATFORM}.io/v1alpha2`,
      kind: 'User',
      metadata: { name: ADMIN },
      spec: { email: `${ADMIN}@bench.example`, password: await hashPassword(PASSWORD), groups: [] },
    },
  });
  await kc.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: ADMIN },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: ADMIN }],
    },
  });
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: PROJECT } } });

  const seeded = performance.now();
  const prometheus = await startTestPrometheus({
    openMetrics: clusterOpenMetrics(cluster),
    rules: { file: RECORDING_RULES, start, end: T, evalIntervalSeconds: 60 },
  });
  console.log(
    `# ${NODES} nodes, ${PODS} pods in one project; Prometheus backfilled with them and the recording rules in ` +
      `${((performance.now() - seeded) / 1000).toFixed(0)} s; ${REQUESTS} sequential requests per round, ${ROUNDS} rounds, ` +
      'medians of p50/p99 (ms)',
  );
  try {
    const server = async (name: string, cacheTtlSeconds: number) => {
      const s = await startRealServer({
        args: [
          `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
          `--platformName=${PLATFORM}`,
          `--auth.signingKeyFile=${keys.es256}`,
          '--auth.addressRequestsPerMinute=0',
          '--log.access.mode=exceptions',
          `--monitoring.endpoint=${prometheus.url}`,
          `--monitoring.cacheTtlSeconds=${cacheTtlSeconds}`,
        ],
        dir,
        name,
      });
      servers.push(s);
      const login = await passwordLogin(s.url, ADMIN, PASSWORD, { id: PLATFORM, secret: PLATFORM });
      const headers = { Authorization: `Bearer ${String(login.body['access_token'])}` };
      return (p: string) => () => fetch(`${s.url}/kapis/monitoring.${PLATFORM}.io/v1alpha3${p}`, { headers });
    };
    // Latency without the result cache (each sequential request asks Prometheus again), so the two
    // columns do the same Prometheus work.
    const uncached = await server('uncached', 0);
    const direct = (level: Level, metrics: string[], scope: Scope) => async () => {
      await Promise.all(
        metrics.map(async (m) => {
          const body = new URLSearchParams({ query: expressionOf(level, m, scope), time: String(T) });
          // Uncompressed, as the server asks for it: fetch would ask for gzip, and Prometheus would then
          // compress each answer for this column only.
          const res = await fetch(`${prometheus.url}/api/v1/query`, {
            method: 'POST',
            body,
            headers: { 'accept-encoding': 'identity' },
          });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`Prometheus ${res.status}`);
        }),
      );
      return new Response('{}', { status: 200 });
    };
    const rows: [string, () => Promise<Response>, () => Promise<Response>][] = [
      [
        `nodes ranking page (${NODES} nodes, ${NODE_METRICS.length} metrics, top 10)`,
        uncached(NODES_PAGE),
        direct('node', NODE_METRICS, { resourceFilter: '.*' }),
      ],
      [
        `a project's pods (${PODS} pods, ${POD_METRICS.length} metrics)`,
        uncached(PODS_PAGE),
        direct('pod', POD_METRICS, { resourceFilter: '.*', namespace: PROJECT }),
      ],
    ];
    console.log('| request | ours p50 | ours p99 | Prometheus direct p50 | p99 | ours / direct at p99 |');
    console.log('|---|---|---|---|---|---|');
    for (const [label, ours, straight] of rows) {
      const [a, b] = await measureInterleaved([ours, straight], { requests: REQUESTS, rounds: ROUNDS });
      console.log(
        `| ${label} | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} | ${b.p50.toFixed(1)} | ${b.p99.toFixed(1)} | ${(a.p99 / b.p99).toFixed(2)} |`,
      );
    }

    // Prometheus queries per cluster overview: one console, then CONSOLES at once, each on a fresh
    // time so that no earlier answer is cached; the server with the default cache.
    const cached = await server('cached', 5);
    const queriesFor = async (consoles: number, t: number) => {
      const path = OVERVIEW.replace(`time=${T}`, `time=${t}`);
      const before = await prometheus.queriesServed();
      await Promise.all(
        Array.from({ length: consoles }, async () => {
          const res = await cached(path)();
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
        }),
      );
      return (await prometheus.queriesServed()) - before;
    };
    const one: number[] = [];
    const many: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      one.push(await queriesFor(1, T - 60 * (2 * r + 1)));
      many.push(await queriesFor(CONSOLES, T - 60 * (2 * r + 2)));
    }
    console.log(
      `\ncluster overview (${CLUSTER_METRICS.length} metrics): Prometheus queries for 1 console ${median(one)}, ` +
        `for ${CONSOLES} consoles at once ${median(many)} (median of ${ROUNDS} rounds)`,
    );
  } finally {
    for (const s of servers) await s.stop();
    await prometheus.stop();
  }
} finally {
  await cp.stop();
  rmSync(dir, { recursive: true, force: true });
}
