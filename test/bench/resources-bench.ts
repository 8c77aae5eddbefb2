// Resources API benchmark on the REAL server (src/main.ts as operators run it, real tokens from
// /oauth/token, SubjectAccessReview-backed authorization) against a large cluster on the real
// kube-apiserver (test/bench/large-cluster.ts: 5,000 nodes, 50,000 pods in 500 namespaces, seeded once
// and then restored from its cache). For each query the original's console sends, p50/p99 of our answer
// beside the kube-apiserver answering the equivalent list directly, and the RSS the queries add.
//
//   npm run bench:resources                                   5,000 nodes, 50,000 pods, 500 namespaces, 3 rounds
//   node test/bench/resources-bench.ts --nodes=500 --pods=5000 --namespaces=50 --rounds=1 --duration=3
//
// Figures go to stderr as they come and to stdout at the end; the LAST line of stdout is one JSON object.
// docs/benchmarks.md records the results.
import os from 'node:os';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { generateTestKeys } from '../support/iam-fixtures.ts';
import { BENCH_GROUP, createBenchUsers, login } from './bench-identities.ts';
import { startLargeCluster } from './large-cluster.ts';
import type { LoadSpec } from './load.ts';
import { runLoad } from './run-load.ts';
import { startRealServer } from './real-server.ts';
import { benchArgs, childrenKilledOnExit } from './bench-args.ts';

const args = benchArgs();
const NODES = Number(args.get('nodes') ?? 5000);
const PODS = Number(args.get('pods') ?? 50_000);
const NAMESPACES = Number(args.get('namespaces') ?? 500);
const ROUNDS = Number(args.get('rounds') ?? 3);
const DURATION_S = Number(args.get('duration') ?? 5);
const CONNECTIONS = Number(args.get('connections') ?? 4);
/** Distinct nodes / namespaces the requests rotate through (so no single answer is simply repeated). */
const SPREAD = 50;

const children = childrenKilledOnExit();
const log = (line: string) => process.stderr.write(`# ${line}\n`);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const load = (spec: LoadSpec) => runLoad(spec, { children });

const cluster = await startLargeCluster({ nodes: NODES, pods: PODS, namespaces: NAMESPACES });
const { cp } = cluster;
try {
  const kc = cluster.kubeConfig;
  const loadAverage = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  const [user] = await createBenchUsers(kc, { prefix: 'rsbench-user', count: 1, cost: 10 });
  const exists = (err: unknown) => {
    if ((err as { statusCode?: number }).statusCode !== 409) throw err;
  };
  const admin = { timeoutMs: 30_000, method: 'POST' as const };
  await kubeRequest(kc, '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    ...admin,
    body: {
      metadata: { name: 'rsbench-reader' },
      rules: [{ apiGroups: [''], resources: ['pods', 'namespaces'], verbs: ['get', 'list'] }],
    },
  }).catch(exists);
  await kubeRequest(kc, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    ...admin,
    body: {
      metadata: { name: 'rsbench-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'rsbench-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: BENCH_GROUP }],
    },
  }).catch(exists);

  const keys = generateTestKeys();
  const server = await startRealServer({
    args: [
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
    ],
    dir: cp.dir,
    name: 'resources-bench',
  });
  const ready = server.memory();
  const heapReady = await server.heap();
  log(
    `server ready in ${server.readySeconds.toFixed(1)} s, RSS ${ready.rssMb.toFixed(0)} MB; load ${loadAverage()}`,
  );
  const token = (await login(server.url, user!)).access;
  const ours = { Authorization: `Bearer ${token}` };
  const kube = { Authorization: `Bearer ${cp.admin.token}` };

  const nodes = Array.from({ length: SPREAD }, (_, i) => cluster.nodeNameOf((i * 97) % NODES));
  const namespaces = Array.from({ length: SPREAD }, (_, i) => cluster.namespaceOf((i * 7) % NAMESPACES));
  const base = '/kapis/resources.platform.io/v1alpha3';
  const queries: { name: string; ours: string[]; kube: string[] }[] = [
    {
      name: "a node's pods (D3)",
      ours: nodes.map((n) => `${base}/pods?limit=6&nodeName=${n}&sortBy=startTime`),
      kube: nodes.map((n) => `/api/v1/pods?fieldSelector=spec.nodeName%3D${n}`),
    },
    {
      name: 'projects, first page (N3)',
      ours: [`${base}/namespaces?labelSelector=%21kubesphere.io%2Fdevopsproject&sortBy=createTime&limit=10`],
      kube: ['/api/v1/namespaces?labelSelector=%21kubesphere.io%2Fdevopsproject'],
    },
    {
      name: "a project's pods, first page",
      ours: namespaces.map((ns) => `${base}/namespaces/${ns}/pods?limit=10&sortBy=startTime`),
      kube: namespaces.map((ns) => `/api/v1/namespaces/${ns}/pods`),
    },
  ];
  // Every path answers 200 before anything is measured.
  for (const q of queries) {
    const res = await fetch(`${server.url}${q.ours[0]}`, { headers: ours });
    if (res.status !== 200) throw new Error(`${q.ours[0]}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { totalItems: number };
    // A pod index answer has an ETag of its own (`W/"index.…"`): shows which source answered.
    log(`${q.name}: ${q.ours[0]} → totalItems ${body.totalItems}, ETag ${res.headers.get('etag')}`);
  }

  interface Figures {
    oursP50: number[];
    oursP99: number[];
    kubeP50: number[];
    kubeP99: number[];
    oursRps: number[];
    kubeRps: number[];
  }
  const figures = new Map<string, Figures>(
    queries.map((q) => [
      q.name,
      { oursP50: [], oursP99: [], kubeP50: [], kubeP99: [], oursRps: [], kubeRps: [] },
    ]),
  );
  // Any load grows the RSS (V8 heap headroom, allocator arenas): first the same amount of load on the
  // node page (the cached API this server already had), so what the resources queries add shows apart.
  const nodePage = `${server.url}${base}/nodes?limit=10&sortBy=name`;
  for (let i = 0; i < ROUNDS * queries.length; i++) {
    await load({ url: nodePage, headers: ours, connections: CONNECTIONS, durationSeconds: DURATION_S + 1 });
  }
  const afterNodeLoad = server.memory();
  log(
    `after the same load on the node page: RSS ${afterNodeLoad.rssMb.toFixed(0)} MB (peak ${afterNodeLoad.peakRssMb.toFixed(0)})`,
  );
  let peakRssMb = afterNodeLoad.rssMb;
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, server.memory().rssMb)), 500);
  const loads: string[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const q of queries) {
      const f = figures.get(q.name)!;
      const common = { connections: CONNECTIONS, durationSeconds: DURATION_S };
      await load({
        url: server.url + q.ours[0],
        headers: ours,
        paths: q.ours,
        connections: CONNECTIONS,
        durationSeconds: 1,
      });
      const a = await load({ url: server.url + q.ours[0], headers: ours, paths: q.ours, ...common });
      const b = await load({
        url: cp.server + q.kube[0],
        headers: kube,
        paths: q.kube,
        caPem: cp.caPem,
        ...common,
      });
      if (a.non2xx + a.errors + a.timeouts + b.non2xx + b.errors + b.timeouts > 0) {
        throw new Error(`${q.name}: failed requests (ours ${JSON.stringify(a)}, kube ${JSON.stringify(b)})`);
      }
      f.oursP50.push(a.p50Ms);
      f.oursP99.push(a.p99Ms);
      f.oursRps.push(a.requestsPerSecond);
      f.kubeP50.push(b.p50Ms);
      f.kubeP99.push(b.p99Ms);
      f.kubeRps.push(b.requestsPerSecond);
      loads.push(loadAverage());
      log(
        `round ${round} ${q.name}: ours p50 ${a.p50Ms} ms p99 ${a.p99Ms} ms (${a.requestsPerSecond.toFixed(0)}/s), ` +
          `kube-apiserver p50 ${b.p50Ms} ms p99 ${b.p99Ms} ms (${b.requestsPerSecond.toFixed(0)}/s); load ${loadAverage()}`,
      );
    }
  }
  clearInterval(sampler);
  const after = server.memory();
  const heap = await server.heap();
  await server.stop();

  const summary = {
    nodes: NODES,
    pods: PODS,
    namespaces: NAMESPACES,
    rounds: ROUNDS,
    duration_s: DURATION_S,
    connections: CONNECTIONS,
    cores: os.availableParallelism(),
    load_averages: loads,
    rss_ready_mb: Math.round(ready.rssMb),
    rss_peak_mb: Math.round(Math.max(peakRssMb, after.peakRssMb)),
    rss_after_node_load_mb: Math.round(afterNodeLoad.peakRssMb),
    rss_added_mb: Math.round(Math.max(peakRssMb, after.peakRssMb) - afterNodeLoad.peakRssMb),
    heap_used_ready_mb: Math.round(heapReady.heapUsedMb),
    heap_used_end_mb: Math.round(heap.heapUsedMb),
    queries: Object.fromEntries(
      [...figures].map(([name, f]) => [
        name,
        {
          ours_p50_ms: median(f.oursP50),
          ours_p99_ms: median(f.oursP99),
          ours_rps: Math.round(median(f.oursRps)),
          kube_p50_ms: median(f.kubeP50),
          kube_p99_ms: median(f.kubeP99),
          kube_rps: Math.round(median(f.kubeRps)),
        },
      ]),
    ),
  };
  process.stdout.write(
    `\nResources API, ${NODES} nodes, ${PODS} pods in ${NAMESPACES} namespaces, medians of ${ROUNDS} rounds\n`,
  );
  process.stdout.write(
    '| query | ours p50 / p99 (ms) | kube-apiserver p50 / p99 (ms) | ours / kube req/s |\n|---|---|---|---|\n',
  );
  for (const [name, q] of Object.entries(summary.queries)) {
    process.stdout.write(
      `| ${name} | ${q.ours_p50_ms} / ${q.ours_p99_ms} | ${q.kube_p50_ms} / ${q.kube_p99_ms} | ${q.ours_rps} / ${q.kube_rps} |\n`,
    );
  }
  process.stdout.write(
    `RSS at ready ${summary.rss_ready_mb} MB, after the same load on the node page ${summary.rss_after_node_load_mb} MB, ` +
      `peak ${summary.rss_peak_mb} MB: added by the resources queries ${summary.rss_added_mb} MB; ` +
      `V8 heap used ${summary.heap_used_ready_mb} → ${summary.heap_used_end_mb} MB; load averages ${loads.join(' | ')}\n`,
  );
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} finally {
  await cluster.stop();
}
