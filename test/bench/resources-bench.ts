// Resources API benchmark on the REAL server (src/main.ts as operators run it, real tokens from
// /oauth/token, SubjectAccessReview-backed authorization) against a large cluster on the real
// kube-apiserver (test/bench/large-cluster.ts: 5,000 nodes, 50,000 pods in 500 namespaces, seeded once
// and then restored from its cache; then 10 Deployments per namespace and 20 workspaces). For each of the
// console's list queries, exactly as it sends them, p50/p99 and req/s of our answer beside the
// kube-apiserver answering the equivalent list directly, and the RSS the queries add.
//
//   npm run bench:resources                                   5,000 nodes, 50,000 pods, 500 namespaces, 3 rounds
//   node test/bench/resources-bench.ts --nodes=500 --pods=5000 --namespaces=50 --rounds=1 --duration=3
//   npm run bench:resources -- --before=DIR                   also another commit's server, interleaved
//
// `--before=DIR`: a checkout of another commit (docs/benchmarks.md: `git archive <commit> | tar -x -C DIR`
// and a node_modules link), whose server runs beside ours and gets the same queries in the same rounds.
//
// Figures go to stderr as they come and to stdout at the end; the LAST line of stdout is one JSON object.
// docs/benchmarks.md records the results.
import os from 'node:os';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { generateTestKeys } from '../support/iam-fixtures.ts';
import { installTenantCrds } from '../support/tenant-fixtures.ts';
import path from 'node:path';
import { inBatches } from './sequential-latency.ts';
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
const BEFORE = args.get('before');
const DEPLOYMENTS_PER_NAMESPACE = Number(args.get('deployments') ?? 10);
const WORKSPACES = 20;
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
      rules: [
        { apiGroups: [''], resources: ['pods', 'namespaces'], verbs: ['get', 'list'] },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
        { apiGroups: ['tenant.platform.io'], resources: ['workspacetemplates'], verbs: ['get', 'list'] },
      ],
    },
  }).catch(exists);
  // The console's other lists: Deployments in every namespace (as a team's would look: no controller
  // runs here, so without status), and workspaces.
  const seeding = performance.now();
  await installTenantCrds(kc, 'platform');
  const deployments = Array.from({ length: NAMESPACES * DEPLOYMENTS_PER_NAMESPACE }, (_, i) => i);
  await inBatches(deployments, 48, (i) =>
    kubeRequest(kc, `/apis/apps/v1/namespaces/${cluster.namespaceOf(i)}/deployments`, {
      ...admin,
      body: deploymentFixture(i),
    }).catch(exists),
  );
  await inBatches(
    Array.from({ length: WORKSPACES }, (_, i) => i),
    10,
    (i) =>
      kubeRequest(kc, '/apis/tenant.platform.io/v1alpha2/workspacetemplates', {
        ...admin,
        body: {
          apiVersion: 'tenant.platform.io/v1alpha2',
          kind: 'WorkspaceTemplate',
          metadata: { name: `rsbench-ws-${i}`, annotations: { 'platform.io/creator': 'admin' } },
          spec: { template: { spec: { manager: 'admin' } } },
        },
      }).catch(exists),
  );
  log(
    `seeded ${deployments.length} deployments and ${WORKSPACES} workspaces in ${((performance.now() - seeding) / 1000).toFixed(0)} s`,
  );
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
  // Started after ours is ready, so each lists the cluster alone.
  const before = BEFORE
    ? await startRealServer({
        args: [
          `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
          `--auth.signingKeyFile=${keys.es256}`,
          '--auth.addressRequestsPerMinute=0',
        ],
        dir: cp.dir,
        name: 'resources-bench-before',
        main: path.resolve(BEFORE, 'src/main.ts'),
      })
    : undefined;
  const beforeReady = before?.memory();
  const beforeHeapReady = await before?.heap();
  if (before)
    log(
      `before (${BEFORE}) ready in ${before.readySeconds.toFixed(1)} s, RSS ${beforeReady!.rssMb.toFixed(0)} MB`,
    );
  const token = (await login(server.url, user!)).access;
  const ours = { Authorization: `Bearer ${token}` };
  const theirs = before ? { Authorization: `Bearer ${(await login(before.url, user!)).access}` } : undefined;
  const kube = { Authorization: `Bearer ${cp.admin.token}` };

  const nodes = Array.from({ length: SPREAD }, (_, i) => cluster.nodeNameOf((i * 97) % NODES));
  const namespaces = Array.from({ length: SPREAD }, (_, i) => cluster.namespaceOf((i * 7) % NAMESPACES));
  const base = '/kapis/resources.platform.io/v1alpha3';
  // The console's query strings, exactly as it sends them.
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
      ours: namespaces.map((ns) => `${base}/namespaces/${ns}/pods?sortBy=startTime&limit=10`),
      kube: namespaces.map((ns) => `/api/v1/namespaces/${ns}/pods`),
    },
    {
      name: "a project's deployments, first page",
      ours: namespaces.map((ns) => `${base}/namespaces/${ns}/deployments?sortBy=updateTime&limit=10`),
      kube: namespaces.map((ns) => `/apis/apps/v1/namespaces/${ns}/deployments`),
    },
    {
      name: 'workspaces, first page',
      ours: ['/kapis/tenant.platform.io/v1alpha3/workspacetemplates?sortBy=createTime&limit=10'],
      kube: ['/apis/tenant.platform.io/v1alpha2/workspacetemplates'],
    },
  ];
  // Every path answers 200 before anything is measured, and the same from both servers.
  for (const q of queries) {
    const res = await fetch(`${server.url}${q.ours[0]}`, { headers: ours });
    if (res.status !== 200) throw new Error(`${q.ours[0]}: ${res.status} ${await res.text()}`);
    const text = await res.text();
    const body = JSON.parse(text) as { totalItems: number };
    // A pod index answer has an ETag of its own (`W/"index.…"`): shows which source answered.
    log(`${q.name}: ${q.ours[0]} → totalItems ${body.totalItems}, ETag ${res.headers.get('etag')}`);
    if (before) {
      const theirsRes = await fetch(`${before.url}${q.ours[0]}`, { headers: theirs! });
      const theirsText = await theirsRes.text();
      if (theirsRes.status !== 200 || theirsText !== text)
        log(
          `${q.name}: the before server answers differently (${theirsRes.status}, ${theirsText.length} bytes)`,
        );
    }
  }

  interface Figures {
    oursP50: number[];
    oursP99: number[];
    kubeP50: number[];
    kubeP99: number[];
    oursRps: number[];
    kubeRps: number[];
    beforeP50: number[];
    beforeP99: number[];
    beforeRps: number[];
  }
  const figures = new Map<string, Figures>(
    queries.map((q) => [
      q.name,
      {
        oursP50: [],
        oursP99: [],
        kubeP50: [],
        kubeP99: [],
        oursRps: [],
        kubeRps: [],
        beforeP50: [],
        beforeP99: [],
        beforeRps: [],
      },
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
      if (before) {
        const warm = {
          url: before.url + q.ours[0],
          headers: theirs!,
          paths: q.ours,
          connections: CONNECTIONS,
        };
        await load({ ...warm, durationSeconds: 1 });
        const c = await load({ ...warm, durationSeconds: DURATION_S });
        if (c.non2xx + c.errors + c.timeouts > 0)
          throw new Error(`${q.name}: failed requests (before ${JSON.stringify(c)})`);
        f.beforeP50.push(c.p50Ms);
        f.beforeP99.push(c.p99Ms);
        f.beforeRps.push(c.requestsPerSecond);
        log(
          `round ${round} ${q.name}: before p50 ${c.p50Ms} ms p99 ${c.p99Ms} ms (${c.requestsPerSecond.toFixed(0)}/s)`,
        );
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
  await before?.stop();

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
    deployments: deployments.length,
    workspaces: WORKSPACES,
    ...(before
      ? {
          before: BEFORE,
          before_rss_ready_mb: Math.round(beforeReady!.rssMb),
          before_heap_used_ready_mb: Math.round(beforeHeapReady!.heapUsedMb),
        }
      : {}),
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
          ...(before
            ? {
                before_p50_ms: median(f.beforeP50),
                before_p99_ms: median(f.beforeP99),
                before_rps: Math.round(median(f.beforeRps)),
              }
            : {}),
        },
      ]),
    ),
  };
  process.stdout.write(
    `\nResources API, ${NODES} nodes, ${PODS} pods in ${NAMESPACES} namespaces, medians of ${ROUNDS} rounds\n`,
  );
  process.stdout.write(
    before
      ? '| query | ours req/s | before req/s | ours ÷ before | ours p50 / p99 (ms) | before p50 / p99 (ms) | kube-apiserver req/s, p50 / p99 (ms) |\n|---|---|---|---|---|---|---|\n'
      : '| query | ours p50 / p99 (ms) | kube-apiserver p50 / p99 (ms) | ours / kube req/s |\n|---|---|---|---|\n',
  );
  for (const [name, q] of Object.entries(summary.queries)) {
    process.stdout.write(
      'before_rps' in q
        ? `| ${name} | ${q.ours_rps} | ${q.before_rps} | ${(q.ours_rps / q.before_rps!).toFixed(2)}× | ${q.ours_p50_ms} / ${q.ours_p99_ms} | ${q.before_p50_ms} / ${q.before_p99_ms} | ${q.kube_rps}, ${q.kube_p50_ms} / ${q.kube_p99_ms} |\n`
        : `| ${name} | ${q.ours_p50_ms} / ${q.ours_p99_ms} | ${q.kube_p50_ms} / ${q.kube_p99_ms} | ${q.ours_rps} / ${q.kube_rps} |\n`,
    );
  }
  if (before)
    process.stdout.write(
      `RSS at ready: ours ${summary.rss_ready_mb} MB, before ${Math.round(beforeReady!.rssMb)} MB; V8 heap used at ready: ours ${summary.heap_used_ready_mb} MB, before ${Math.round(beforeHeapReady!.heapUsedMb)} MB\n`,
    );
  process.stdout.write(
    `RSS at ready ${summary.rss_ready_mb} MB, after the same load on the node page ${summary.rss_after_node_load_mb} MB, ` +
      `peak ${summary.rss_peak_mb} MB: added by the resources queries ${summary.rss_added_mb} MB; ` +
      `V8 heap used ${summary.heap_used_ready_mb} → ${summary.heap_used_end_mb} MB; load averages ${loads.join(' | ')}\n`,
  );
  process.stdout.write(`${JSON.stringify(summary)}\n`);
} finally {
  await cluster.stop();
}

/** Deployment `i` as a team's would be: labels, a selector, a two-container template with probes. */
function deploymentFixture(i: number) {
  const app = `app-${i}`;
  return {
    metadata: {
      name: app,
      labels: { app, 'app.kubernetes.io/version': `v1.${i % 7}.0` },
      annotations: { 'deployment.kubernetes.io/revision': '1', 'platform.io/creator': 'admin' },
    },
    spec: {
      replicas: 1 + (i % 3),
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: {
          containers: [
            {
              name: 'app',
              image: `registry.example/team-${i % 40}/${app}:v1.${i % 7}.0`,
              ports: [{ name: 'http', containerPort: 8080 }],
              env: [{ name: 'LOG_LEVEL', value: 'info' }],
              resources: {
                requests: { cpu: '100m', memory: '128Mi' },
                limits: { cpu: '200m', memory: '256Mi' },
              },
              readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
            },
            { name: 'metrics', image: 'registry.example/exporter:0.9' },
          ],
        },
      },
    },
  };
}
