// A large cluster for benchmarks: N nodes and M pods in K namespaces on the real kube-apiserver + etcd
// (test/cluster/control-plane.ts), seeded through the API, then kept as an etcd data dir keyed by the
// fixture's parameters and what it writes, so the next run with the same parameters starts in seconds.
//
//   node test/bench/large-cluster.ts --nodes=5000 --pods=50000 --namespaces=500   seed (or reuse) and report
//   node test/bench/large-cluster.ts --nodes=500 --pods=5000 --namespaces=50 --no-cache   always seed afresh
//
// In a benchmark: `const cluster = await startLargeCluster({ nodes, pods, namespaces })`, then
// `cluster.cp` (kubeconfig, tokens) and `cluster.report` (how it was seeded); `cluster.stop()` at the end.
//
// Seeding is fast because every request goes over a few kept-alive connections (@kubernetes/client-node
// otherwise opens a new TLS connection per request), many at a time, to an apiserver whose in-flight
// limits are raised; pods are created already bound (`spec.nodeName`), so no scheduler is needed.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { shareKubeDispatcher } from '../../src/cluster/upstream-agent.ts';
import { controlPlaneBinaries } from '../cluster/binaries.ts';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { nodeFixture } from '../cluster/node-fixtures.ts';
import { benchArgs } from './bench-args.ts';
import { cpuSecondsOf } from './proc-cpu.ts';

export interface LargeClusterSpec {
  nodes: number;
  pods: number;
  /** Pods are spread evenly over this many namespaces (`<prefix>-ns-<i>`). */
  namespaces: number;
  /** Prefix of every name (nodes `<prefix>-0000`, pods `<prefix>-pod-<i>`). Default `large`. */
  prefix?: string;
}

export interface SeedReport {
  /** True when the cluster came from the data-dir cache (the seeding figures are then from that run). */
  restored: boolean;
  nodesSeconds: number;
  podsSeconds: number;
  /** Pods fully written (created, and their status set) per second. */
  podsPerSecond: number;
  /** Requests in flight while seeding. */
  concurrency: number;
  /** Seconds for the whole start: seeding or restoring, and the apiserver becoming ready. */
  startSeconds: number;
}

export interface LargeCluster {
  cp: ControlPlane;
  spec: Required<LargeClusterSpec>;
  report: SeedReport;
  /** A kubeconfig (context admin) whose requests share one kept-alive connection pool. */
  kubeConfig: KubeConfig;
  namespaceOf(pod: number): string;
  nodeNameOf(index: number): string;
  stop(): Promise<void>;
}

/**
 * kube-apiserver flags for a benchmark's control plane: room for many requests in flight (the defaults,
 * 400 and 200, would queue the seeding). The admin identity is in system:masters, which priority and
 * fairness exempts anyway.
 */
export const LARGE_CLUSTER_APISERVER_ARGS = [
  '--max-requests-inflight=1000',
  '--max-mutating-requests-inflight=1000',
];

const DEFAULT_CONCURRENCY = 48;

function complete(spec: LargeClusterSpec): Required<LargeClusterSpec> {
  for (const key of ['nodes', 'pods', 'namespaces'] as const) {
    if (!Number.isInteger(spec[key]) || spec[key] < (key === 'pods' ? 0 : 1))
      throw new Error(`large cluster: ${key} must be a positive integer, got ${spec[key]}`);
  }
  return { prefix: 'large', ...spec };
}

export const nodeNameOf = (prefix: string, index: number) => `${prefix}-${String(index).padStart(4, '0')}`;
export const namespaceOf = (spec: Required<LargeClusterSpec>, pod: number) =>
  `${spec.prefix}-ns-${String(pod % spec.namespaces).padStart(3, '0')}`;

/** How pod `i` ends up: most run; some finished as a Job's pods do. */
export function phaseOf(i: number): 'Running' | 'Succeeded' | 'Failed' {
  if (i % 20 === 3) return 'Succeeded';
  if (i % 50 === 7) return 'Failed';
  return 'Running';
}

const resources = (cpuMilli: number, memoryMi: number, limits = true) => ({
  requests: { cpu: `${cpuMilli}m`, memory: `${memoryMi}Mi` },
  ...(limits ? { limits: { cpu: `${cpuMilli * 2}m`, memory: `${memoryMi * 2}Mi` } } : {}),
});

/**
 * Pod `i` as a Deployment's ReplicaSet would make it, already bound to its node: owner reference,
 * labels, env, ports, probes, a projected service-account volume, tolerations, two containers with
 * requests and limits. Variety the allocation sums must get right: every 5th pod has an init
 * container, every 10th (from 1) a restartable sidecar, every 12th (from 5) is BestEffort, every
 * 8th (from 2) has requests without limits.
 */
export function podFixture(spec: Required<LargeClusterSpec>, i: number, name = `${spec.prefix}-pod-${i}`) {
  const service = `service-${i % 40}`;
  const bestEffort = i % 12 === 5;
  const limits = i % 8 !== 2;
  const withResources = (r: ReturnType<typeof resources>) => (bestEffort ? {} : { resources: r });
  const app = {
    name: 'app',
    image: `registry.example/team-${i % 40}/${service}:v1.${i % 7}.0`,
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: [
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    ],
    ...withResources(resources(100 + (i % 5) * 50, 128 + (i % 4) * 64, limits)),
    readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 10 },
    livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 20, failureThreshold: 3 },
    volumeMounts: [
      { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
    ],
  };
  const metrics = {
    name: 'metrics',
    image: 'registry.example/exporter:0.9',
    ...withResources(resources(10, 32, limits)),
  };
  const init =
    i % 5 === 0
      ? [{ name: 'migrate', image: 'registry.example/migrate:1', ...withResources(resources(500, 256)) }]
      : i % 10 === 1
        ? [
            {
              name: 'proxy',
              image: 'registry.example/proxy:1',
              restartPolicy: 'Always',
              ...withResources(resources(50, 64)),
            },
          ]
        : undefined;
  const hash = `h${(i % 97).toString(36)}x${(i % 40).toString(36)}`;
  return {
    metadata: {
      name,
      namespace: namespaceOf(spec, i),
      labels: { app: service, 'pod-template-hash': hash },
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9100' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${service}-${hash}`,
          uid: `00000000-0000-4000-8000-${(i % 40).toString(16).padStart(12, '0')}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: nodeNameOf(spec.prefix, i % spec.nodes),
      serviceAccountName: 'default',
      ...(init ? { initContainers: init } : {}),
      containers: [app, metrics],
      volumes: [
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [
                    { path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
                  ],
                },
              },
            ],
          },
        },
      ],
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      terminationGracePeriodSeconds: 30,
    },
  };
}

/** The status a kubelet would have written for pod `i` (Running, or finished), as a merge patch. */
export function podStatusPatch(spec: Required<LargeClusterSpec>, i: number) {
  const phase = phaseOf(i);
  const at = new Date(Date.UTC(2026, 0, 1) + (i % 86_400) * 1000).toISOString().replace('.000Z', 'Z');
  const running = phase === 'Running';
  const hostIP = `10.${(i % spec.nodes) >> 8}.${(i % spec.nodes) & 255}.1`;
  const podIP = `10.${128 + ((i >> 16) & 127)}.${(i >> 8) & 255}.${i & 255}`;
  const condition = (type: string, status: boolean) => ({
    type,
    status: status ? 'True' : 'False',
    lastProbeTime: null,
    lastTransitionTime: at,
    ...(status ? {} : { reason: phase === 'Running' ? 'ContainersNotReady' : 'PodCompleted' }),
  });
  const containerStatus = (name: string, image: string) => ({
    name,
    image,
    imageID: `${image}@sha256:${createHash('sha256').update(image).digest('hex')}`,
    containerID: `containerd://${createHash('sha256').update(`${i}/${name}`).digest('hex')}`,
    ready: running,
    started: running,
    restartCount: i % 17 === 0 ? 1 : 0,
    state: running
      ? { running: { startedAt: at } }
      : {
          terminated: {
            exitCode: phase === 'Succeeded' ? 0 : 1,
            reason: phase === 'Succeeded' ? 'Completed' : 'Error',
            startedAt: at,
            finishedAt: at,
          },
        },
  });
  const pod = podFixture(spec, i);
  return {
    status: {
      phase,
      conditions: [
        condition('PodReadyToStartContainers', running),
        condition('Initialized', true),
        condition('Ready', running),
        condition('ContainersReady', running),
        condition('PodScheduled', true),
      ],
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: at,
      containerStatuses: pod.spec.containers.map((c) => containerStatus(c.name, c.image)),
    },
  };
}

/** Runs `work(i)` for i in [0, count) with `concurrency` in flight; the first error stops it. */
async function inParallel(count: number, concurrency: number, work: (i: number) => Promise<void>) {
  let next = 0;
  let failed: unknown;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (failed === undefined && next < count) {
        const i = next++;
        try {
          await work(i);
        } catch (err) {
          failed ??= err;
        }
      }
    }),
  );
  if (failed !== undefined) throw failed;
}

/** An admin KubeConfig whose requests share one kept-alive connection pool. */
export function pooledKubeConfig(cp: ControlPlane): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  kc.setCurrentContext('admin');
  if (!shareKubeDispatcher(kc)) throw new Error('cannot share the kube-apiserver connection pool');
  return kc;
}

/**
 * Requests as the admin over a small pool of kept-alive connections (undici directly: the kubeconfig
 * path costs more CPU per request than the apiserver's own work on a 2-core machine).
 */
export function adminClient(cp: ControlPlane, connections = 16) {
  const agent = new Agent({ connect: { ca: cp.caPem }, connections, keepAliveTimeout: 30_000 });
  const headers = { authorization: `Bearer ${cp.admin.token}`, accept: 'application/json' };
  return {
    /** Resolves with the parsed answer; throws on a status other than 2xx. */
    async send(
      method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
      path: string,
      body?: unknown,
      contentType = 'application/json',
    ): Promise<unknown> {
      const res = await request(cp.server + path, {
        method,
        dispatcher: agent,
        headers: body === undefined ? headers : { ...headers, 'content-type': contentType },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode}: ${text}`);
      return JSON.parse(text) as unknown;
    },
    close: () => agent.close(),
  };
}

/** Seeds namespaces, nodes and pods (with their statuses) into an empty control plane. */
export async function seedLargeCluster(
  cp: ControlPlane,
  spec: Required<LargeClusterSpec>,
  options: { concurrency?: number; log?: (line: string) => void } = {},
): Promise<Omit<SeedReport, 'restored' | 'startSeconds'>> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const log = options.log ?? (() => {});
  const client = adminClient(cp);
  try {
    return await seed(cp, client, spec, concurrency, log);
  } finally {
    await client.close();
  }
}

async function seed(
  cp: ControlPlane,
  client: ReturnType<typeof adminClient>,
  spec: Required<LargeClusterSpec>,
  concurrency: number,
  log: (line: string) => void,
): Promise<Omit<SeedReport, 'restored' | 'startSeconds'>> {
  const post = (url: string, body: unknown) => client.send('POST', url, body);
  let started = performance.now();
  await inParallel(spec.namespaces, concurrency, (k) =>
    post('/api/v1/namespaces', { metadata: { name: namespaceOf(spec, k) } }).then(() => {}),
  );
  await inParallel(spec.nodes, concurrency, (n) =>
    post('/api/v1/nodes', nodeFixture(n, { prefix: spec.prefix })).then(() => {}),
  );
  const nodesSeconds = (performance.now() - started) / 1000;
  log(`# seeded ${spec.namespaces} namespaces and ${spec.nodes} nodes in ${nodesSeconds.toFixed(1)} s`);

  started = performance.now();
  const [etcdPid, apiserverPid] = cp.pids as [number, number];
  const cpuBefore = {
    etcd: cpuSecondsOf(etcdPid),
    apiserver: cpuSecondsOf(apiserverPid),
    own: process.cpuUsage(),
  };
  let done = 0;
  const progress = setInterval(() => {
    const s = (performance.now() - started) / 1000;
    log(`#   ${done} / ${spec.pods} pods, ${(done / s).toFixed(0)} pods/s`);
  }, 30_000);
  try {
    await inParallel(spec.pods, concurrency, async (i) => {
      const pod = podFixture(spec, i);
      const base = `/api/v1/namespaces/${pod.metadata.namespace}/pods`;
      await post(base, pod);
      // A pod's status is not taken on create: the kubelet's part is a second write.
      await client.send(
        'PATCH',
        `${base}/${pod.metadata.name}/status`,
        podStatusPatch(spec, i),
        'application/merge-patch+json',
      );
      done++;
    });
  } finally {
    clearInterval(progress);
  }
  const podsSeconds = (performance.now() - started) / 1000;
  const podsPerSecond = spec.pods / podsSeconds;
  const own = process.cpuUsage(cpuBefore.own);
  log(
    `# seeded ${spec.pods} pods in ${podsSeconds.toFixed(1)} s (${podsPerSecond.toFixed(0)} pods/s); CPU s: ` +
      `kube-apiserver ${(cpuSecondsOf(apiserverPid) - cpuBefore.apiserver).toFixed(1)}, ` +
      `etcd ${(cpuSecondsOf(etcdPid) - cpuBefore.etcd).toFixed(1)}, ` +
      `this process ${((own.user + own.system) / 1e6).toFixed(1)}`,
  );
  return { nodesSeconds, podsSeconds, podsPerSecond, concurrency };
}

/** Drops etcd's history (every pod was written twice) and defragments, so the kept data dir is small. */
async function compactEtcd(etcdUrl: string): Promise<void> {
  const call = async (api: string, body: unknown) => {
    const res = await fetch(`${etcdUrl}/v3/${api}`, { method: 'POST', body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`etcd ${api}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as { header?: { revision?: string } };
  };
  const revision = (await call('kv/range', { key: Buffer.from('/').toString('base64') })).header?.revision;
  await call('kv/compaction', { revision, physical: true });
  await call('maintenance/defragment', {});
}

/** Where seeded etcd data dirs are kept: beside the control-plane binaries. */
function cacheRoot(): string {
  const root =
    process.env['PLATFORM_CACHE_DIR'] ??
    path.join(process.env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'), 'platform-apiserver');
  return path.join(root, 'large-cluster');
}

/**
 * The cache key: the parameters, what the fixture writes (a sample of its objects, so an edit to them
 * invalidates the cache and an edit elsewhere does not) and the binaries' versions.
 */
function cacheKey(spec: Required<LargeClusterSpec>): string {
  const hash = createHash('sha256').update(JSON.stringify(spec));
  for (let i = 0; i < 1000; i++) {
    hash.update(JSON.stringify(podFixture(spec, i))).update(JSON.stringify(podStatusPatch(spec, i)));
    hash.update(namespaceOf(spec, i));
  }
  for (let n = 0; n < 20; n++) hash.update(JSON.stringify(nodeFixture(n, { prefix: spec.prefix })));
  const { kubeApiserver, etcd } = controlPlaneBinaries();
  hash.update(kubeApiserver).update(etcd).update(JSON.stringify(LARGE_CLUSTER_APISERVER_ARGS));
  return `${spec.nodes}n-${spec.pods}p-${spec.namespaces}ns-${hash.digest('hex').slice(0, 12)}`;
}

/** Throws unless the cluster holds exactly the fixture's nodes and pods (a broken cache, a failed seed). */
async function checkCounts(cp: ControlPlane, spec: Required<LargeClusterSpec>): Promise<void> {
  const client = adminClient(cp, 1);
  try {
    const count = async (path: string) => {
      const list = (await client.send('GET', `${path}?limit=1`)) as {
        items: unknown[];
        metadata: { remainingItemCount?: number };
      };
      return list.items.length + (list.metadata.remainingItemCount ?? 0);
    };
    const [nodes, pods] = [await count('/api/v1/nodes'), await count('/api/v1/pods')];
    if (nodes !== spec.nodes || pods !== spec.pods)
      throw new Error(
        `large cluster holds ${nodes} nodes and ${pods} pods, not ${spec.nodes} and ${spec.pods}`,
      );
  } finally {
    await client.close();
  }
}

/**
 * A control plane holding the large cluster: restored from the cache when this fixture (same
 * parameters, same source, same binaries) was seeded before, else seeded now and then cached.
 * With `cache: false` it is always seeded afresh and nothing is kept.
 */
export async function startLargeCluster(
  input: LargeClusterSpec,
  options: { cache?: boolean; concurrency?: number; log?: (line: string) => void } = {},
): Promise<LargeCluster> {
  const spec = complete(input);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const useCache = options.cache ?? true;
  const started = performance.now();
  const cached = useCache ? path.join(cacheRoot(), cacheKey(spec)) : undefined;
  const saved = cached ? path.join(cached, 'report.json') : undefined;

  let report: Omit<SeedReport, 'restored' | 'startSeconds'>;
  let restored = false;
  let cp: ControlPlane;
  if (cached && saved && existsSync(saved)) {
    report = JSON.parse(readFileSync(saved, 'utf8')) as typeof report;
    cp = await startControlPlane({
      apiserverArgs: LARGE_CLUSTER_APISERVER_ARGS,
      etcdDataFrom: path.join(cached, 'etcd'),
      startTimeoutMs: 300_000,
    });
    restored = true;
    log(`# large cluster restored from ${cached}`);
  } else {
    cp = await startControlPlane({
      apiserverArgs: LARGE_CLUSTER_APISERVER_ARGS,
      startTimeoutMs: 300_000,
    });
    try {
      report = await seedLargeCluster(cp, spec, {
        log,
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
      });
    } catch (err) {
      await cp.stop();
      throw err;
    }
    if (cached) {
      // Kept in a sibling first and renamed, so a run that dies half-way never leaves a partial cache.
      const partial = `${cached}.partial-${process.pid}`;
      rmSync(partial, { recursive: true, force: true });
      mkdirSync(partial, { recursive: true });
      await compactEtcd(cp.etcdUrl);
      await cp.stop({ keepEtcdDataIn: path.join(partial, 'etcd') });
      writeFileSync(path.join(partial, 'report.json'), JSON.stringify(report));
      rmSync(cached, { recursive: true, force: true });
      renameSync(partial, cached);
      cp = await startControlPlane({
        apiserverArgs: LARGE_CLUSTER_APISERVER_ARGS,
        etcdDataFrom: path.join(cached, 'etcd'),
        startTimeoutMs: 300_000,
      });
      log(`# large cluster cached in ${cached}`);
    }
  }
  try {
    await checkCounts(cp, spec);
  } catch (err) {
    await cp.stop();
    throw err;
  }
  return {
    cp,
    spec,
    report: { ...report, restored, startSeconds: (performance.now() - started) / 1000 },
    kubeConfig: pooledKubeConfig(cp),
    namespaceOf: (pod) => namespaceOf(spec, pod),
    nodeNameOf: (index) => nodeNameOf(spec.prefix, index),
    stop: () => cp.stop(),
  };
}

async function main() {
  const args = benchArgs();
  const concurrency = args.has('concurrency') ? Number(args.get('concurrency')) : undefined;
  const cluster = await startLargeCluster(
    {
      nodes: Number(args.get('nodes') ?? 5000),
      pods: Number(args.get('pods') ?? 50_000),
      namespaces: Number(args.get('namespaces') ?? 500),
    },
    { cache: !args.has('no-cache'), ...(concurrency ? { concurrency } : {}) },
  );
  try {
    process.stdout.write(JSON.stringify(cluster.report) + '\n');
  } finally {
    await cluster.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
