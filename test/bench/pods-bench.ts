// Pod-cache benchmark (allocation annotations): a real control plane with 5,000 nodes and 50,000 pods
// bound to them; the node API started without and with the pod watch, alternately, several rounds.
// Reports the memory the pod cache adds (after sync and a full GC) and page throughput with pods vs
// without, also while pods are created and deleted.
//
//   node test/bench/pods-bench.ts                      5,000 nodes, 50,000 pods, 3 rounds, 10 s runs
//   node test/bench/pods-bench.ts --nodes=500 --pods=5000 --rounds=1 --duration=3
//
// Run by `npm run bench:nodes` after the node list benchmark. Figures on stdout (docs/benchmarks.md).
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { startControlPlane } from '../cluster/control-plane.ts';
import { createNodes } from '../cluster/node-fixtures.ts';
import type { LoadResult, LoadSpec } from './load.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k!, v ?? 'true'];
  }),
);
const NODES = Number(args.get('nodes') ?? 5000);
const PODS = Number(args.get('pods') ?? 50_000);
const ROUNDS = Number(args.get('rounds') ?? 3);
const DURATION_S = Number(args.get('duration') ?? 10);
const CONNECTIONS = Number(args.get('connections') ?? 10);
const CHURN_PER_S = Number(args.get('churn') ?? 20);
const PREFIX = 'podbench';
const NAMESPACE = 'default';

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

const nodeName = (i: number) => `${PREFIX}-${String(i % NODES).padStart(4, '0')}`;

/** A pod as a Deployment would make it: labels, env, ports, probes, two containers; some with init/sidecar. */
function podFixture(i: number, name = `${PREFIX}-pod-${i}`) {
  const resources = (cpu: number, memoryMi: number) => ({
    requests: { cpu: `${cpu}m`, memory: `${memoryMi}Mi` },
    limits: { cpu: `${cpu * 2}m`, memory: `${memoryMi * 2}Mi` },
  });
  const app = {
    name: 'app',
    image: `registry.example/team-${i % 40}/service:v1.${i % 7}.0`,
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    env: [
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    resources: resources(100 + (i % 5) * 50, 128 + (i % 4) * 64),
    readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 10 },
  };
  const metrics = { name: 'metrics', image: 'registry.example/exporter:0.9', resources: resources(10, 32) };
  return {
    metadata: {
      name,
      labels: { app: `service-${i % 40}`, 'pod-template-hash': `h${i % 97}` },
      annotations: { 'prometheus.io/scrape': 'true' },
    },
    spec: {
      nodeName: nodeName(i),
      ...(i % 5 === 0
        ? {
            initContainers: [
              { name: 'migrate', image: 'registry.example/migrate:1', resources: resources(500, 256) },
            ],
          }
        : {}),
      ...(i % 10 === 1
        ? {
            initContainers: [
              {
                name: 'proxy',
                image: 'registry.example/proxy:1',
                restartPolicy: 'Always',
                resources: resources(50, 64),
              },
            ],
          }
        : {}),
      containers: [app, metrics],
      terminationGracePeriodSeconds: 30,
    },
  };
}

const createPod = (kc: KubeConfig, body: unknown) =>
  kubeRequest(kc, `/api/v1/namespaces/${NAMESPACE}/pods`, { method: 'POST', body, timeoutMs: 60_000 });
const deletePod = (kc: KubeConfig, name: string) =>
  kubeRequest(kc, `/api/v1/namespaces/${NAMESPACE}/pods/${name}?gracePeriodSeconds=0`, {
    method: 'DELETE',
    timeoutMs: 60_000,
  });

function startServer(kubeconfig: string, mode: 'with' | 'without') {
  const child = spawn(
    process.execPath,
    ['--expose-gc', path.join(here, 'serve-allocations.ts'), kubeconfig, mode],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  return new Promise<{
    child: ChildProcess;
    info: { nodesUrl: string; rssMb: number; heapUsedMb: number; pods: number; syncSeconds: number };
  }>((resolve, reject) => {
    createInterface(child.stderr!).once('line', (line) => resolve({ child, info: JSON.parse(line) }));
    child.once('exit', (code) => reject(new Error(`serve-allocations exited with ${code}`)));
  });
}

async function load(spec: LoadSpec): Promise<LoadResult> {
  const child = spawn(process.execPath, [path.join(here, 'load.ts'), JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  return JSON.parse(out) as LoadResult;
}

/** Creates and deletes pods at `perSecond` until stopped; counts what the apiserver accepted. */
function churn(kc: KubeConfig, perSecond: number) {
  let running = true;
  let done = 0;
  let n = 0;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      const name = `${PREFIX}-churn-${n}`;
      const i = n++;
      try {
        await createPod(kc, podFixture(i, name));
        await deletePod(kc, name);
        done++;
      } catch {
        /* counted as not done */
      }
      const wait = 1000 / perSecond - (Date.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return done;
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main() {
  process.stderr.write(`# ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), node ${process.version}\n`);
  const cp = await startControlPlane();
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    kc.setCurrentContext('admin');
    let started = Date.now();
    await createNodes(kc.makeApiClient(CoreV1Api), NODES, { prefix: PREFIX, concurrency: 32 });
    process.stderr.write(`# seeded ${NODES} nodes in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 48 }, async () => {
        for (let i = next++; i < PODS; i = next++) await createPod(kc, podFixture(i));
      }),
    );
    const seedPodsSeconds = (Date.now() - started) / 1000;
    process.stderr.write(`# seeded ${PODS} pods in ${seedPodsSeconds.toFixed(1)} s\n`);

    const admin = { Authorization: `Bearer ${cp.admin.token}` };
    const samples = { with: [] as Sample[], without: [] as Sample[] };
    interface Sample {
      rssMb: number;
      heapUsedMb: number;
      syncSeconds: number;
      pods: number;
      quiet: number;
      churned: number;
    }
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so drift on a shared machine does not favour one.
      const order: ('with' | 'without')[] = round % 2 ? ['without', 'with'] : ['with', 'without'];
      for (const mode of order) {
        const { child, info } = await startServer(cp.kubeconfigPath, mode);
        const url = `${info.nodesUrl}?limit=10&sortBy=name`;
        await load({ url, headers: admin, connections: CONNECTIONS, durationSeconds: 2 });
        const quiet = await load({
          url,
          headers: admin,
          connections: CONNECTIONS,
          durationSeconds: DURATION_S,
        });
        const churner = churn(kc, CHURN_PER_S);
        const busy = await load({
          url,
          headers: admin,
          connections: CONNECTIONS,
          durationSeconds: DURATION_S,
        });
        const churnedPods = await churner.stop();
        const failed = quiet.non2xx + quiet.errors + busy.non2xx + busy.errors;
        if (failed) throw new Error(`${mode}: ${failed} failed requests`);
        samples[mode].push({
          rssMb: info.rssMb,
          heapUsedMb: info.heapUsedMb,
          syncSeconds: info.syncSeconds,
          pods: info.pods,
          quiet: quiet.requestsPerSecond,
          churned: busy.requestsPerSecond,
        });
        process.stderr.write(
          `# round ${round} ${mode} pods: RSS ${fmt(info.rssMb)} MB, heap ${fmt(info.heapUsedMb)} MB, synced in ${fmt(info.syncSeconds, 1)} s, ` +
            `${fmt(quiet.requestsPerSecond)} req/s quiet, ${fmt(busy.requestsPerSecond)} req/s with ${churnedPods} pods created+deleted\n`,
        );
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    }
    const m = (mode: 'with' | 'without', key: keyof Sample) => median(samples[mode].map((s) => s[key]));
    const lines = [
      `pods: ${fmt(PODS)} on ${fmt(NODES)} nodes (seeded in ${fmt(seedPodsSeconds, 1)} s); medians of ${ROUNDS} rounds, ${DURATION_S} s runs, ${CONNECTIONS} connections, page = limit=10&sortBy=name`,
      '',
      '| | without pod cache | with pod cache | with − without / ratio |',
      '|---|---|---|---|',
      `| RSS after sync + GC | ${fmt(m('without', 'rssMb'))} MB | ${fmt(m('with', 'rssMb'))} MB | **+${fmt(m('with', 'rssMb') - m('without', 'rssMb'), 1)} MB** (target ≤ 40 MB) |`,
      `| V8 heap used after sync + GC | ${fmt(m('without', 'heapUsedMb'))} MB | ${fmt(m('with', 'heapUsedMb'))} MB | +${fmt(m('with', 'heapUsedMb') - m('without', 'heapUsedMb'), 1)} MB |`,
      `| start to synced | ${fmt(m('without', 'syncSeconds'), 1)} s | ${fmt(m('with', 'syncSeconds'), 1)} s | |`,
      `| page req/s, quiet | ${fmt(m('without', 'quiet'))} | ${fmt(m('with', 'quiet'))} | **${fmt(m('with', 'quiet') / m('without', 'quiet'), 2)}** (target ≥ 0.9) |`,
      `| page req/s, ${CHURN_PER_S} pods/s created+deleted | ${fmt(m('without', 'churned'))} | ${fmt(m('with', 'churned'))} | **${fmt(m('with', 'churned') / m('without', 'churned'), 2)}** |`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await cp.stop();
  }
}

await main();
