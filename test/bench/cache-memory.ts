// What a watch cache costs per 1,000 objects of each kind the resources and tenant APIs could cache: a
// private real control plane is seeded with 1,000 objects of each kind (through the API, so they carry
// what the kube-apiserver adds), then the server's own caches (WatchedKind, the pod cache) list and
// watch them in this process, one kind at a time, and the V8 heap (after a full GC), the Buffers and
// the RSS they add are read. Pods twice: packed, as the pod cache keeps them, and whole, as a plain
// watch cache would. Kinds the server reads as the caller (secrets, configmaps) are measured as if they
// were cached, for the record of what not caching them saves.
//
//   node --expose-gc test/bench/cache-memory.ts              1,000 of each kind
//   node --expose-gc test/bench/cache-memory.ts --count=2000
//
// The last line of stdout is one JSON object; docs/resources-api.md records the figures.
import { startControlPlane } from '../cluster/control-plane.ts';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { PodCache } from '../../src/nodes/pod-cache.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { BUILT_IN_KINDS, type ResourceKind } from '../../src/resources/kinds.ts';
import { WatchedKind } from '../../src/resources/watched-kind.ts';
import { adminKubeConfig } from '../support/iam-fixtures.ts';
import { installTenantCrds } from '../support/tenant-fixtures.ts';
import { benchArgs } from './bench-args.ts';
import { podFixture, podStatusPatch } from './large-cluster.ts';
import { inBatches } from './sequential-latency.ts';

const COUNT = Number(benchArgs().get('count') ?? 1000);
const NAMESPACES = 10;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const log = (line: string) => process.stderr.write(`# ${line}\n`);
/** As the pod fixture names them (test/bench/large-cluster.ts). */
const namespaceOf = (i: number) => `mem-ns-${String(i % NAMESPACES).padStart(3, '0')}`;
const spec = { nodes: 100, pods: COUNT, namespaces: NAMESPACES, prefix: 'mem' };

/** A team's pod template: two containers, ports, env, requests and limits, a probe. */
const template = (app: string, i: number) => ({
  metadata: { labels: { app } },
  spec: {
    containers: [
      {
        name: 'app',
        image: `registry.example/team-${i % 40}/${app}:v1.${i % 7}.0`,
        ports: [{ name: 'http', containerPort: 8080 }],
        env: [{ name: 'LOG_LEVEL', value: 'info' }],
        resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '200m', memory: '256Mi' } },
        readinessProbe: { httpGet: { path: '/ready', port: 8080 } },
      },
      { name: 'metrics', image: 'registry.example/exporter:0.9' },
    ],
  },
});
const labelled = (app: string) => ({ name: app, labels: { app, 'app.kubernetes.io/version': 'v1' } });

/** One object of each kind, as a team's would be. */
const fixtures: Record<string, (i: number) => object> = {
  deployments: (i) => ({
    metadata: labelled(`app-${i}`),
    spec: { replicas: 2, selector: { matchLabels: { app: `app-${i}` } }, template: template(`app-${i}`, i) },
  }),
  statefulsets: (i) => ({
    metadata: labelled(`db-${i}`),
    spec: {
      replicas: 1,
      serviceName: `db-${i}`,
      selector: { matchLabels: { app: `db-${i}` } },
      template: template(`db-${i}`, i),
    },
  }),
  daemonsets: (i) => ({
    metadata: labelled(`agent-${i}`),
    spec: { selector: { matchLabels: { app: `agent-${i}` } }, template: template(`agent-${i}`, i) },
  }),
  jobs: (i) => ({
    metadata: labelled(`job-${i}`),
    spec: {
      template: {
        ...template(`job-${i}`, i),
        spec: { ...template(`job-${i}`, i).spec, restartPolicy: 'Never' },
      },
    },
  }),
  cronjobs: (i) => ({
    metadata: labelled(`cron-${i}`),
    spec: {
      schedule: '*/5 * * * *',
      jobTemplate: {
        spec: {
          template: {
            ...template(`cron-${i}`, i),
            spec: { ...template(`cron-${i}`, i).spec, restartPolicy: 'OnFailure' },
          },
        },
      },
    },
  }),
  // Headless: the test control plane's Service IP range holds 254 addresses (a ClusterIP adds two short fields).
  services: (i) => ({
    metadata: labelled(`svc-${i}`),
    spec: {
      clusterIP: 'None',
      selector: { app: `app-${i}` },
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    },
  }),
  configmaps: (i) => ({
    metadata: labelled(`config-${i}`),
    data: { 'app.yaml': `server:\n  port: 8080\n  name: app-${i}\nlog:\n  level: info\n`.repeat(4) },
  }),
  secrets: (i) => ({
    metadata: labelled(`secret-${i}`),
    type: 'Opaque',
    stringData: { username: `user-${i}`, password: `p-${i}-${'x'.repeat(24)}`, token: 'y'.repeat(200) },
  }),
};

const kindOf = (resource: string) => BUILT_IN_KINDS.find((k) => k.resource === resource)!;
const WORKSPACE_TEMPLATES: ResourceKind = {
  resource: 'workspacetemplates',
  kind: 'WorkspaceTemplate',
  group: 'tenant.platform.io',
  version: 'v1alpha2',
  namespaced: false,
  source: 'watch-cache',
  why: '',
  filters: {},
};

/**
 * V8 heap used, Buffers and RSS after full collections, in bytes. Between collections the event loop
 * turns, so memory freed by finalizers (sockets, Buffers) is freed before it is read.
 */
async function memory() {
  for (let i = 0; i < 3; i++) {
    gc!();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external, rss: m.rss };
}

const cp = await startControlPlane();
const results: Record<string, { heap_kb: number; external_kb: number; rss_kb: number }> = {};
let packedPodBytes: number | undefined;
try {
  const kc = adminKubeConfig(cp.kubeconfigPath);
  const post = (path: string, body: object) =>
    kubeRequest(kc, path, { method: 'POST', timeoutMs: 30_000, body });
  for (let n = 0; n < NAMESPACES; n++)
    await post('/api/v1/namespaces', { metadata: { name: namespaceOf(n) } });
  await installTenantCrds(kc, 'platform');
  const items = Array.from({ length: COUNT }, (_, i) => i);
  const seeding = performance.now();
  for (const [resource, fixture] of Object.entries(fixtures)) {
    const kind = kindOf(resource);
    const root = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
    await inBatches(items, 32, (i) => post(`${root}/namespaces/${namespaceOf(i)}/${resource}`, fixture(i)));
  }
  await inBatches(items, 32, async (i) => {
    const pod = podFixture(spec, i);
    await post(`/api/v1/namespaces/${pod.metadata.namespace}/pods`, pod);
    await kubeRequest(kc, `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      timeoutMs: 30_000,
      body: podStatusPatch(spec, i),
    });
  });
  await inBatches(items, 32, (i) =>
    post('/apis/tenant.platform.io/v1alpha2/workspacetemplates', {
      apiVersion: 'tenant.platform.io/v1alpha2',
      kind: 'WorkspaceTemplate',
      metadata: { name: `mem-ws-${i}`, annotations: { 'platform.io/creator': 'admin' } },
      spec: { template: { spec: { manager: 'admin' } } },
    }),
  );
  log(`seeded ${COUNT} of each kind in ${((performance.now() - seeding) / 1000).toFixed(0)} s`);

  const logger = createLogger({ level: 'warn', stream: process.stderr });
  const perThousand = (bytes: number, objects: number) => Math.round(((bytes / objects) * 1000) / 1024);
  // Every cache stays until the end: each one's cost is what the heap grew by while it listed, never
  // blurred by an earlier one being freed.
  const kept: { stop(): Promise<void> }[] = [];
  let last = await memory();
  /** Starts a cache, waits for its first list, and records what it added. */
  const measure = async (
    name: string,
    make: () => {
      start(): void;
      stop(): Promise<void>;
      waitForSynced(ms: number): Promise<void>;
      size: number;
    },
    expected = COUNT,
  ) => {
    const cache = make();
    kept.push(cache);
    cache.start();
    await cache.waitForSynced(120_000);
    const now = await memory();
    // Services: also the `kubernetes` Service of `default`.
    if (cache.size < expected) throw new Error(`${name}: ${cache.size} objects cached, ${COUNT} seeded`);
    results[name] = {
      heap_kb: perThousand(now.heap - last.heap, cache.size),
      external_kb: perThousand(now.external - last.external, cache.size),
      rss_kb: perThousand(now.rss - last.rss, cache.size),
    };
    last = now;
    log(`${name}: ${JSON.stringify(results[name])} per 1,000`);
  };
  const watched = (kind: ResourceKind) => () => {
    const cache = new WatchedKind({ kind, kubeConfig: kc, logger });
    return {
      start: () => cache.start(),
      stop: () => cache.stop(),
      waitForSynced: (ms: number) => cache.informer.waitForSynced(ms),
      get size() {
        return cache.informer.size;
      },
    };
  };
  // A first cache pays for what every later one shares (connections, code): not counted.
  await measure('warm-up (namespaces)', watched(kindOf('namespaces')), NAMESPACES);
  delete results['warm-up (namespaces)'];
  let packedBytes = 0;
  await measure('pods (packed, the pod cache)', () => {
    const cache = new PodCache({ kubeConfig: kc, logger });
    cache.informer.whenSynced(() => {
      for (const pod of cache.pods()) packedBytes += pod.body.length;
    });
    return cache;
  });
  log(`a packed pod: ${(packedBytes / COUNT).toFixed(0)} bytes on average`);
  packedPodBytes = Math.round(packedBytes / COUNT);
  await measure('pods (whole, a plain watch cache)', watched(kindOf('pods')));
  for (const resource of Object.keys(fixtures)) await measure(resource, watched(kindOf(resource)));
  await measure('workspacetemplates', watched(WORKSPACE_TEMPLATES));
  await Promise.all(kept.map((c) => c.stop()));
} finally {
  await cp.stop();
}
process.stdout.write(`\nWatch cache cost per 1,000 objects (${COUNT} seeded of each kind), KiB\n`);
process.stdout.write('| kind | V8 heap | Buffers | RSS |\n|---|---|---|---|\n');
for (const [name, r] of Object.entries(results))
  process.stdout.write(`| ${name} | ${r.heap_kb} | ${r.external_kb} | ${r.rss_kb} |\n`);
process.stdout.write(`A packed pod: ${packedPodBytes ?? 0} bytes on average\n`);
process.stdout.write(
  `${JSON.stringify({ count: COUNT, packed_pod_bytes: packedPodBytes, per_1000_kib: results })}\n`,
);
