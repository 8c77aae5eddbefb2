// Pod-cache benchmark (allocation annotations): a real control plane holding 5,000 nodes and 50,000 pods
// in 500 namespaces (test/bench/large-cluster.ts: seeded once, then restored from its cache); the node
// API started without and with the pod watch, alternately, several rounds. Reports the memory the pod
// cache adds — after the first sync, and in the steady state after the load runs (both after a full GC) —
// and page throughput with pods vs without, quiet and while pods are created and deleted.
//
//   node test/bench/pods-bench.ts                      5,000 nodes, 50,000 pods, 3 rounds, 10 s runs
//   node test/bench/pods-bench.ts --nodes=500 --pods=5000 --namespaces=50 --rounds=1 --duration=3
//   add --no-cache to seed the cluster afresh (and keep nothing)
//
// Run by `npm run bench:nodes` after the node list benchmark. Figures on stdout (docs/benchmarks.md).
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { adminClient, podFixture, startLargeCluster } from './large-cluster.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import { underMemoryLimit } from './memory-cgroup.ts';
import { benchMemoryLimitMb, IMAGE_ENV } from './real-server.ts';
import type { MemoryReport } from './serve-allocations.ts';
import { benchArgs, childrenKilledOnExit } from './bench-args.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = benchArgs();
const NODES = Number(args.get('nodes') ?? 5000);
const PODS = Number(args.get('pods') ?? 50_000);
const NAMESPACES = Number(args.get('namespaces') ?? 500);
const ROUNDS = Number(args.get('rounds') ?? 3);
const DURATION_S = Number(args.get('duration') ?? 10);
const CONNECTIONS = Number(args.get('connections') ?? 10);
const CHURN_PER_S = Number(args.get('churn') ?? 20);

const children = childrenKilledOnExit();

interface ServerInfo extends MemoryReport {
  nodesUrl: string;
  pods: number;
  syncSeconds: number;
}

const MEMORY_LIMIT_MB = benchMemoryLimitMb();
const MEMORY_LIMIT_TEXT = MEMORY_LIMIT_MB > 0 ? `${MEMORY_LIMIT_MB} MiB` : 'none';

/**
 * serve-allocations in its own process, with the image's environment (malloc arenas, production) and,
 * as in a Pod of the chart, under its memory limit (which sizes V8's heap; BENCH_MEMORY_LIMIT_MB=0: none).
 */
async function startServer(kubeconfig: string, mode: 'with' | 'without', round: number) {
  const argv = [process.execPath, '--expose-gc', path.join(here, 'serve-allocations.ts'), kubeconfig, mode];
  const command = underMemoryLimit(
    `platform-pods-bench-${process.pid}-${mode}-${round}`,
    MEMORY_LIMIT_MB,
    argv,
  );
  if (command.unavailable) throw new Error(`memory limit: ${command.unavailable}`);
  const child = spawn(command.command, command.args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...IMAGE_ENV, ...process.env },
  });
  children.push(child);
  child.once('exit', () => {
    const kills = command.release();
    if (kills > 0) process.stderr.write(`# serve-allocations ${mode}: ${kills} OOM kill(s)\n`);
  });
  const lines = createInterface(child.stderr!)[Symbol.asyncIterator]();
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`serve-allocations exited with ${code}`))),
  );
  const nextLine = async () => {
    const line = await Promise.race([lines.next(), exited]);
    if (line.done) throw new Error('serve-allocations closed its stderr');
    return line.value;
  };
  const info = JSON.parse(await nextLine()) as ServerInfo;
  return {
    child,
    info,
    /** A full GC in the server, then its memory figures. */
    memory: async () => {
      child.kill('SIGUSR2');
      return JSON.parse(await nextLine()) as MemoryReport;
    },
  };
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
function churn(
  client: ReturnType<typeof adminClient>,
  spec: Parameters<typeof podFixture>[0],
  perSecond: number,
) {
  let running = true;
  let done = 0;
  let n = 0;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      const i = n++;
      const pod = podFixture(spec, i, `${spec.prefix}-churn-${i}`);
      const base = `/api/v1/namespaces/${pod.metadata.namespace}/pods`;
      try {
        await client.send('POST', base, pod);
        await client.send('DELETE', `${base}/${pod.metadata.name}?gracePeriodSeconds=0`);
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

const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

interface Sample {
  syncSeconds: number;
  pods: number;
  /** After the first sync (and a full GC). */
  synced: MemoryReport;
  /** After the load runs (and a full GC): the steady state. */
  steady: MemoryReport;
  quiet: number;
  churned: number;
}

async function main() {
  process.stderr.write(
    `# ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), node ${process.version}, load average ${loadAverage()}, ` +
      `server memory limit ${MEMORY_LIMIT_TEXT}\n`,
  );
  const cluster = await startLargeCluster(
    { nodes: NODES, pods: PODS, namespaces: NAMESPACES },
    { cache: !args.has('no-cache') },
  );
  const { cp, report } = cluster;
  const client = adminClient(cp);
  try {
    const admin = { Authorization: `Bearer ${cp.admin.token}` };
    const samples = { with: [] as Sample[], without: [] as Sample[] };
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so drift on a shared machine does not favour one.
      const order: ('with' | 'without')[] = round % 2 ? ['without', 'with'] : ['with', 'without'];
      for (const mode of order) {
        const server = await startServer(cp.kubeconfigPath, mode, round);
        const { info } = server;
        const url = `${info.nodesUrl}?limit=10&sortBy=name`;
        const run = (durationSeconds: number) =>
          load({ url, headers: admin, connections: CONNECTIONS, durationSeconds });
        await run(2);
        const quiet = await run(DURATION_S);
        const churner = churn(client, cluster.spec, CHURN_PER_S);
        const busy = await run(DURATION_S);
        const churnedPods = await churner.stop();
        const steady = await server.memory();
        const failed = quiet.non2xx + quiet.errors + busy.non2xx + busy.errors;
        if (failed) throw new Error(`${mode}: ${failed} failed requests`);
        samples[mode].push({
          syncSeconds: info.syncSeconds,
          pods: info.pods,
          synced: info,
          steady,
          quiet: quiet.requestsPerSecond,
          churned: busy.requestsPerSecond,
        });
        process.stderr.write(
          `# round ${round} ${mode} pods (${fmt(info.pods)}): synced in ${fmt(info.syncSeconds, 1)} s, ` +
            `RSS ${fmt(info.rssMb)} MB synced, ${fmt(steady.rssMb)} MB steady, peak ${fmt(steady.peakRssMb)} MB, ` +
            `heap used ${fmt(steady.heapUsedMb)} MB of ${fmt(steady.heapTotalMb)}, external ${fmt(steady.externalMb)} MB; ` +
            `${fmt(quiet.requestsPerSecond)} req/s quiet, ${fmt(busy.requestsPerSecond)} req/s with ${churnedPods} pods created+deleted; ` +
            `load average ${loadAverage()}\n`,
        );
        server.child.kill('SIGTERM');
        await new Promise((r) => server.child.once('exit', r));
      }
    }
    const m = (mode: 'with' | 'without', pick: (s: Sample) => number) => median(samples[mode].map(pick));
    const row = (label: string, pick: (s: Sample) => number, unit: string, target = '') => {
      const [without, withPods] = [m('without', pick), m('with', pick)];
      return `| ${label} | ${fmt(without)} ${unit} | ${fmt(withPods)} ${unit} | **+${fmt(withPods - without, 1)} ${unit}**${target} |`;
    };
    const ratio = (label: string, pick: (s: Sample) => number, target = '') =>
      `| ${label} | ${fmt(m('without', pick))} | ${fmt(m('with', pick))} | **${fmt(m('with', pick) / m('without', pick), 2)}**${target} |`;
    // Each round's pair ran back to back, so its ratio is the least exposed to the machine's drift.
    const roundRatio = (pick: (s: Sample) => number) =>
      median(samples.with.map((w, k) => pick(w) / pick(samples.without[k]!)));
    const seeded = report.restored ? 'restored from the fixture cache; seeded' : 'seeded';
    const lines = [
      `pods: ${fmt(PODS)} in ${fmt(NAMESPACES)} namespaces on ${fmt(NODES)} nodes (${seeded} at ${fmt(report.podsPerSecond)} pods/s); ` +
        `medians of ${ROUNDS} rounds, ${DURATION_S} s runs, ${CONNECTIONS} connections, page = limit=10&sortBy=name; memory limit ${MEMORY_LIMIT_TEXT}; load average at the end ${loadAverage()}`,
      '',
      '| | without pod cache | with pod cache | with − without / ratio |',
      '|---|---|---|---|',
      row('RSS, steady (after the load runs + GC)', (s) => s.steady.rssMb, 'MB', ' (target ≤ 40 MB)'),
      row('RSS after the first sync + GC', (s) => s.synced.rssMb, 'MB'),
      row('peak RSS (VmHWM)', (s) => s.steady.peakRssMb, 'MB'),
      row('V8 heap used, steady', (s) => s.steady.heapUsedMb, 'MB'),
      row('V8 heap committed, steady', (s) => s.steady.heapTotalMb, 'MB'),
      row('external (Buffers), steady', (s) => s.steady.externalMb, 'MB'),
      `| start to synced | ${fmt(
        m('without', (s) => s.syncSeconds),
        1,
      )} s | ${fmt(
        m('with', (s) => s.syncSeconds),
        1,
      )} s | |`,
      ratio('page req/s, quiet', (s) => s.quiet, ' (target ≥ 0.9)'),
      ratio(`page req/s, ${CHURN_PER_S} pods/s created+deleted`, (s) => s.churned),
      `| the same, median of each round's ratio (quiet / while pods change) | | | **${fmt(
        roundRatio((s) => s.quiet),
        2,
      )}** / **${fmt(
        roundRatio((s) => s.churned),
        2,
      )}** |`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await client.close();
    await cluster.stop();
  }
}

await main();
