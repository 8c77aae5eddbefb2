// Node list benchmark: seeds realistic nodes into a real control plane and measures, side by side on
// this machine, our cached list against the kube-apiserver and a bare node:http ceiling.
//
//   npm run bench:nodes                 5,000 nodes, 10 s per run
//   npm run bench:nodes -- --nodes=1000 --duration=5
//
// Every server and the load generator (autocannon) run in their own processes. Figures go to stdout;
// docs/benchmarks.md records them.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { createNodes } from '../cluster/node-fixtures.ts';
import { httpGet } from '../support/http-client.ts';
import type { LoadResult, LoadSpec } from './load.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k!, v ?? 'true'];
  }),
);
const NODES = Number(args.get('nodes') ?? 5000);
const DURATION_S = Number(args.get('duration') ?? 10);
const CONNECTIONS = Number(args.get('connections') ?? 10);
const CHURN_PER_S = Number(args.get('churn') ?? 100);
const PREFIX = 'bench';

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Starts a TypeScript entry in its own process and resolves with the first line it prints on `channel`. */
function startChild(
  entry: string,
  argv: string[],
  channel: 'stdout' | 'stderr',
): Promise<{ child: ChildProcess; line: string }> {
  // BENCH_PROFILE=<dir> writes a CPU profile of the server under test there when it exits.
  const profile =
    entry === 'serve-nodes.ts' && process.env['BENCH_PROFILE']
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_PROFILE']}`]
      : [];
  const child = spawn(process.execPath, [...profile, path.join(here, entry), ...argv], {
    stdio: ['ignore', channel === 'stdout' ? 'pipe' : 'ignore', channel === 'stderr' ? 'pipe' : 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const stream = channel === 'stdout' ? child.stdout! : child.stderr!;
    const lines = createInterface(stream);
    lines.once('line', (line) => resolve({ child, line }));
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
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

/** A short warm-up run (JIT, connection pools, caches), then the measured run. */
async function measure(
  label: string,
  spec: Omit<LoadSpec, 'durationSeconds'> & { durationSeconds?: number },
) {
  await load({ ...spec, durationSeconds: 2 });
  const result = await load({ durationSeconds: DURATION_S, ...spec });
  const problems = result.non2xx + result.errors + result.timeouts;
  process.stderr.write(
    `# ${label}: ${result.requestsPerSecond.toFixed(0)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms` +
      (problems ? `, ${problems} failed` : '') +
      '\n',
  );
  return result;
}

function memoryOf(pid: number): { rssMb: number; peakRssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main() {
  process.stderr.write(`# ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), node ${process.version}\n`);
  const cp: ControlPlane = await startControlPlane();
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const seedStart = Date.now();
    await createNodes(core, NODES, { prefix: PREFIX, concurrency: 32 });
    const seedSeconds = (Date.now() - seedStart) / 1000;
    process.stderr.write(`# seeded ${NODES} nodes in ${seedSeconds.toFixed(1)} s\n`);

    const admin = { Authorization: `Bearer ${cp.admin.token}` };
    const syncStart = Date.now();
    const ours = await startChild('serve-nodes.ts', [cp.kubeconfigPath], 'stderr');
    const { nodesUrl, pid } = JSON.parse(ours.line) as { nodesUrl: string; pid: number };
    const startToSyncedSeconds = (Date.now() - syncStart) / 1000;
    const memoryAfterSync = memoryOf(pid);

    const pageQuery = '?limit=10&sortBy=name';
    const page = await httpGet(nodesUrl + pageQuery, admin);
    if (page.status !== 200) throw new Error(`our list answered ${page.status}: ${page.body.toString()}`);
    const full = await httpGet(nodesUrl, admin);
    const fullBytes = full.body.length;
    const fullGzipBytes = (await httpGet(nodesUrl, { ...admin, 'Accept-Encoding': 'gzip' })).body.length;
    const bodyFile = path.join(cp.dir, 'page.json');
    writeFileSync(bodyFile, page.body);
    const bare = await startChild('bare-server.ts', [bodyFile], 'stdout');
    const baseline = await startChild('list-per-request-server.ts', [cp.kubeconfigPath], 'stdout');
    const kubeSpec = { headers: admin, caPem: cp.caPem };

    const a = await measure('(a) ours, limit=10&sortBy=name', {
      url: nodesUrl + pageQuery,
      headers: admin,
      connections: CONNECTIONS,
    });
    const b = await measure('(b) kube-apiserver LIST limit=10', {
      url: `${cp.server}/api/v1/nodes?limit=10`,
      connections: CONNECTIONS,
      ...kubeSpec,
    });
    const d = await measure('(d) bare node:http, same bytes as (a)', {
      url: bare.line,
      connections: CONNECTIONS,
    });
    const e = await measure('(e) LIST-per-request server, limit=10', {
      url: `${baseline.line}${pageQuery}`,
      connections: 2,
    });
    const fullConnections = 2;
    const c1 = await measure('(c) ours, full list', {
      url: nodesUrl,
      headers: admin,
      connections: fullConnections,
    });
    const c2 = await measure('(c) kube-apiserver, full LIST', {
      url: `${cp.server}/api/v1/nodes`,
      connections: fullConnections,
      ...kubeSpec,
    });
    const c3 = await measure('(c) ours, full list, gzip', {
      url: nodesUrl,
      headers: { ...admin, 'Accept-Encoding': 'gzip' },
      connections: fullConnections,
    });
    const filtered = await measure('(f) ours, status=warning&labelSelector=…&limit=10', {
      url: `${nodesUrl}?status=warning&labelSelector=${encodeURIComponent('node-role.kubernetes.io/worker,kubernetes.io/arch=amd64')}&limit=10&page=2`,
      headers: admin,
      connections: CONNECTIONS,
    });

    // churn.ts prints its figures only when stopped.
    const churnChild = spawn(
      process.execPath,
      [path.join(here, 'churn.ts'), cp.kubeconfigPath, PREFIX, String(NODES), String(CHURN_PER_S)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(churnChild);
    let churnOut = '';
    churnChild.stdout.on('data', (c: Buffer) => (churnOut += c.toString()));
    const underChurn = await measure(`(a) ours under ${CHURN_PER_S} status updates/s`, {
      url: nodesUrl + pageQuery,
      headers: admin,
      connections: CONNECTIONS,
    });
    const underChurnPaced = await measure(`(a) ours under churn, paced at 200 req/s`, {
      url: nodesUrl + pageQuery,
      headers: admin,
      connections: CONNECTIONS,
      overallRate: 200,
    });
    churnChild.kill('SIGTERM');
    await new Promise((resolve) => churnChild.once('exit', resolve));
    const churnStats = JSON.parse(churnOut) as {
      updates: number;
      failures: number;
      seconds: number;
      reasons: Record<string, number>;
    };
    if (churnStats.failures)
      process.stderr.write(`# churn failures: ${JSON.stringify(churnStats.reasons)}\n`);
    const memoryAtEnd = memoryOf(pid);

    const rows: [string, LoadResult][] = [
      ['(a) ours: `limit=10&sortBy=name`', a],
      ['(b) kube-apiserver: LIST `limit=10`', b],
      ['(d) bare node:http, prebuilt bytes of (a)', d],
      ['(e) LIST-per-request server (LIST all, sort, page 10)', e],
      ['(f) ours: `status=warning&labelSelector=…&limit=10&page=2`', filtered],
      [`(c) ours: full list (${fullConnections} connections)`, c1],
      [`(c) kube-apiserver: full LIST (${fullConnections} connections)`, c2],
      [`(c) ours: full list, gzip (${fullConnections} connections)`, c3],
      [`(a) under ${fmt(churnStats.updates / churnStats.seconds)} status updates/s`, underChurn],
      ['(a) under churn, paced at 200 req/s', underChurnPaced],
    ];
    const lines = [
      `nodes: ${fmt(NODES)}; seeding ${seedSeconds.toFixed(1)} s; server start to synced ${startToSyncedSeconds.toFixed(1)} s`,
      `machine: ${os.cpus().length} CPUs, ${os.cpus()[0]?.model}; node ${process.version}; ${DURATION_S} s per run after a 2 s warm-up; ${CONNECTIONS} connections unless noted`,
      `full list body: ${fmt(fullBytes / 1e6, 1)} MB (${fmt(fullGzipBytes / 1e6, 1)} MB gzip); page body: ${fmt(page.body.length / 1e3, 1)} kB`,
      '',
      '| run | req/s | p50 ms | p99 ms | failed |',
      '|---|---:|---:|---:|---:|',
      ...rows.map(
        ([label, r]) =>
          `| ${label} | ${fmt(r.requestsPerSecond)} | ${r.p50Ms} | ${r.p99Ms} | ${r.non2xx + r.errors + r.timeouts} |`,
      ),
      '',
      `ratio a/b (ours vs kube-apiserver, page of 10): ${fmt(a.requestsPerSecond / b.requestsPerSecond, 1)}× (target ≥ 10)`,
      `ratio a/d (ours vs bare node:http ceiling): ${fmt(a.requestsPerSecond / d.requestsPerSecond, 2)} (target ≥ 0.5)`,
      `ratio a/e (ours vs LIST-per-request server): ${fmt(a.requestsPerSecond / e.requestsPerSecond, 0)}×`,
      `ratio c (ours vs kube-apiserver, full list): ${fmt(c1.requestsPerSecond / c2.requestsPerSecond, 1)}×; gzip: ${fmt(c3.requestsPerSecond / c2.requestsPerSecond, 1)}×`,
      `p99 of (a) under churn: ${underChurn.p99Ms} ms saturated, ${underChurnPaced.p99Ms} ms paced (target ≤ 20 ms); churn delivered ${churnStats.updates} updates (${churnStats.failures} failed) in ${churnStats.seconds.toFixed(1)} s`,
      `server RSS: ${fmt(memoryAfterSync.rssMb)} MB after sync, ${fmt(memoryAtEnd.rssMb)} MB at the end, peak ${fmt(memoryAtEnd.peakRssMb)} MB (target ≤ 300 MB)`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await cp.stop();
  }
}

await main();
