// Pod-cache benchmark (allocation annotations) on the REAL server: src/main.ts as operators run it, under
// the chart's memory limit, with a token from /oauth/token. Two real control planes hold the same 5,000
// nodes and 500 namespaces (test/bench/large-cluster.ts fixtures: seeded once, then restored from their
// cache); one also holds 50,000 pods, the other none. The server is started against each, alternately,
// several rounds, so what the first adds over the second is what 50,000 pods cost it: the pod cache, its
// per-node sums and the pod index. Reports RSS at ready (after the server's own start-up release), after
// the load runs and at its peak, and page throughput with pods vs without, quiet and while pods are
// created and deleted.
//
//   node test/bench/pods-bench.ts                      5,000 nodes, 50,000 pods, 3 rounds, 10 s runs
//   node test/bench/pods-bench.ts --quick              1,000 nodes, 5,000 pods in 50 namespaces, 3 s runs
//   node test/bench/pods-bench.ts --nodes=500 --pods=5000 --namespaces=50 --rounds=1 --duration=3
//   add --no-cache to seed the clusters afresh (and keep nothing)
//   node test/bench/pods-bench.ts --starts=14 [--pods=0]   one cluster, 14 fresh servers, a page run each:
//                                                      CPU per request of each start (a slow start shows)
//
// Run by `npm run bench:nodes` after the node list benchmark, with the same flags (bench-nodes.ts). Figures on stdout (docs/benchmarks.md).
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { generateTestKeys } from '../support/iam-fixtures.ts';
import { createBenchUsers, login } from './bench-identities.ts';
import { adminClient, podFixture, startLargeCluster, type LargeCluster } from './large-cluster.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import { runLoad } from './run-load.ts';
import { benchMemoryLimitMb, startRealServer, type RealServer } from './real-server.ts';
import { benchArgs, childrenKilledOnExit } from './bench-args.ts';
import { cpuSecondsOf } from './proc-cpu.ts';

const args = benchArgs();
// --quick: a tenth of the cluster and 3 s runs, for `npm run bench:nodes -- --quick`.
const QUICK = args.has('quick');
const NODES = Number(args.get('nodes') ?? (QUICK ? 1000 : 5000));
const PODS = Number(args.get('pods') ?? (QUICK ? 5000 : 50_000));
const NAMESPACES = Number(args.get('namespaces') ?? (QUICK ? 50 : 500));
const ROUNDS = Number(args.get('rounds') ?? 3);
const DURATION_S = Number(args.get('duration') ?? (QUICK ? 3 : 10));
const CONNECTIONS = Number(args.get('connections') ?? 10);
const CHURN_PER_S = Number(args.get('churn') ?? 20);
const USER = 'bench-pods-0';
// --starts=N: start the server N times against one cluster (the pods' unless --pods=0), one page run each.
const STARTS = Number(args.get('starts') ?? 0);

const children = childrenKilledOnExit();
const log = (line: string) => process.stderr.write(`# ${line}\n`);
// The servers' logs outlive the control planes' directories, for a round that needs explaining.
const LOG_DIR = mkdtempSync(path.join(os.tmpdir(), 'pods-bench-'));

type Mode = 'with' | 'without';

interface Target {
  cluster: LargeCluster;
  serverArgs: string[];
}

const load = (spec: LoadSpec) => runLoad(spec, { children });

/** Creates and deletes pods at `perSecond` until stopped; counts what the apiserver accepted. */
function churn(cluster: LargeCluster, perSecond: number) {
  const client = adminClient(cluster.cp);
  let running = true;
  let done = 0;
  let n = 0;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      const i = n++;
      const pod = podFixture(cluster.spec, i, `${cluster.spec.prefix}-churn-${i}`);
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
      await client.close();
      return done;
    },
  };
}

/** The users CRD, a user allowed to read nodes, and the server's flags, for one cluster. */
async function prepare(cluster: LargeCluster, signingKey: string): Promise<Target> {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.cp.kubeconfigPath);
  kc.setCurrentContext('admin');
  await createBenchUsers(kc, { prefix: 'bench-pods', count: 1, cost: 10 });
  return {
    cluster,
    serverArgs: [
      `--kubernetes.kubeconfig=${cluster.cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${signingKey}`,
      '--auth.addressRequestsPerMinute=0',
    ],
  };
}

/** Logs the bench user in; resolves with a function that loads the node page for some seconds. */
async function pageLoad(server: RealServer): Promise<(durationSeconds: number) => Promise<LoadResult>> {
  const token = (await login(server.url, USER)).access;
  const url = `${server.url}/kapis/resources.platform.io/v1alpha3/nodes?limit=10&sortBy=name`;
  return (durationSeconds) =>
    load({ url, headers: { Authorization: `Bearer ${token}` }, connections: CONNECTIONS, durationSeconds });
}

/** Waits until the server has logged `message` (its log is JSON lines), with a deadline. */
async function logged(server: RealServer, message: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const needle = `"message":"${message}"`;
  while (!readFileSync(server.logFile, 'utf8').includes(needle)) {
    if (Date.now() > deadline) throw new Error(`server did not log "${message}"; see ${server.logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One of the server's cache metrics for a kind, from its /metrics (platform_cache_objects, …). */
async function cacheMetric(server: RealServer, name: string, kind: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const match = new RegExp(`^${name}\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(text);
  return Number(match?.[1] ?? NaN);
}

/** Seconds the server has spent in garbage collection so far, by kind (major, minor, incremental, weakcb). */
async function gcSeconds(server: RealServer): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const seconds: Record<string, number> = {};
  for (const [, kind, value] of text.matchAll(
    /^nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} ([0-9.e+-]+)$/gm,
  ))
    seconds[kind!] = Number(value);
  return seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const signed = (n: number, digits = 0) => (n < 0 ? `−${fmt(-n, digits)}` : `+${fmt(n, digits)}`);
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

interface Sample {
  readySeconds: number;
  pods: number;
  /** At ready, once the server has run its start-up memory release. */
  readyRssMb: number;
  /** After the load runs: what the process holds in service (no forced collection). */
  loadedRssMb: number;
  peakRssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  quiet: LoadResult;
  churned: LoadResult;
}

async function measure(target: Target, mode: Mode, round: number): Promise<Sample> {
  const server = await startRealServer({
    args: target.serverArgs,
    dir: LOG_DIR,
    name: `pods-${mode}-${round}`,
  });
  try {
    return await measureRunning(server, target, mode, round);
  } catch (err) {
    // The server's memory cgroup holds only the server: a kill there is why the runs failed.
    await server.stop();
    const kills = server.oomKills();
    throw kills > 0
      ? new Error(`${mode}: ${kills} OOM kill(s) under ${server.memoryLimit}`, { cause: err })
      : err;
  } finally {
    await server.stop();
  }
}

async function measureRunning(
  server: RealServer,
  target: Target,
  mode: Mode,
  round: number,
): Promise<Sample> {
  const { cluster } = target;
  await logged(server, 'start-up memory released');
  const ready = server.memory();
  const pods = await cacheMetric(server, 'platform_cache_objects', 'pods');
  const expected = mode === 'with' ? PODS : 0;
  if (pods !== expected) throw new Error(`${mode}: the server holds ${pods} pods, not ${expected}`);
  const run = await pageLoad(server);
  await run(2);
  const cpuBefore = cpuSecondsOf(server.pid);
  const gcBefore = await gcSeconds(server);
  const quiet = await run(DURATION_S);
  const quietCpuSeconds = cpuSecondsOf(server.pid) - cpuBefore;
  const gcAfter = await gcSeconds(server);
  // Where the quiet run's collections went: a run that costs more CPU per request shows whether GC is why.
  const quietGc = Object.entries(gcAfter)
    .map(([kind, after]) => `${kind} ${fmt((after - (gcBefore[kind] ?? 0)) * 1000)} ms`)
    .join(', ');
  const churner = churn(cluster, CHURN_PER_S);
  const churned = await run(DURATION_S);
  const churnedPods = await churner.stop();
  const failed = quiet.non2xx + quiet.errors + churned.non2xx + churned.errors;
  if (failed) throw new Error(`${mode}: ${failed} failed requests`);
  const loaded = server.memory();
  const heap = await server.heap();
  // A relist during the runs (a watch expired) would parse the whole list again: say so beside the figures.
  const relists = await cacheMetric(server, 'platform_cache_relists_total', 'pods');
  const sample: Sample = {
    readySeconds: server.readySeconds,
    pods,
    readyRssMb: ready.rssMb,
    loadedRssMb: loaded.rssMb,
    peakRssMb: loaded.peakRssMb,
    heapUsedMb: heap.heapUsedMb,
    heapTotalMb: heap.heapTotalMb,
    externalMb: heap.externalMb,
    quiet,
    churned,
  };
  log(
    `round ${round} ${mode} pods (${fmt(pods)}): ready in ${fmt(server.readySeconds, 1)} s, RSS ${fmt(ready.rssMb)} MB ` +
      `at ready, ${fmt(loaded.rssMb)} MB after the load, peak ${fmt(loaded.peakRssMb)} MB, heap used ` +
      `${fmt(heap.heapUsedMb)} MB of ${fmt(heap.heapTotalMb)}, external ${fmt(heap.externalMb)} MB; ` +
      `${fmt(quiet.requestsPerSecond)} req/s quiet (p99 ${fmt(quiet.p99Ms)} ms, server CPU ` +
      `${fmt((quietCpuSeconds * 1e6) / quiet.requests, 0)} µs per request; GC ${quietGc}), pod lists ${relists}, ` +
      `${fmt(churned.requestsPerSecond)} req/s with ${churnedPods} pods created+deleted; load average ${loadAverage()}`,
  );
  return sample;
}

/**
 * The server started `STARTS` times against one cluster, one page run each after a warm-up: whether a fresh
 * process's cost per request varies from start to start (docs/benchmarks.md, "Slow starts"; add
 * BENCH_NODE_FLAGS="--log-ic --logfile=/dev/null" to make a start whose inline caches keep missing stand out).
 */
async function starts(cluster: LargeCluster, signingKey: string) {
  const target = await prepare(cluster, signingKey);
  const cpuUs: number[] = [];
  for (let i = 1; i <= STARTS; i++) {
    const server = await startRealServer({ args: target.serverArgs, dir: LOG_DIR, name: `start-${i}` });
    try {
      await logged(server, 'start-up memory released');
      const run = await pageLoad(server);
      await run(2);
      const before = cpuSecondsOf(server.pid);
      const result = await run(DURATION_S);
      cpuUs.push(((cpuSecondsOf(server.pid) - before) * 1e6) / result.requests);
      log(
        `start ${i}: ${fmt(result.requestsPerSecond)} req/s, p99 ${fmt(result.p99Ms)} ms, ` +
          `server ${fmt(cpuUs.at(-1)!)} CPU µs per request; load average ${loadAverage()}`,
      );
    } finally {
      await server.stop();
    }
  }
  const sorted = [...cpuUs].sort((a, b) => a - b);
  process.stdout.write(
    `${STARTS} starts against ${fmt(NODES)} nodes and ${fmt(cluster.spec.pods)} pods: CPU µs per request ` +
      `median ${fmt(median(cpuUs))}, lowest ${fmt(sorted[0]!)}, highest ${fmt(sorted.at(-1)!)}; ` +
      `starts above 1.3 × the median: ${cpuUs.filter((us) => us > 1.3 * median(cpuUs)).length}\n`,
  );
}

async function main() {
  const limitMb = benchMemoryLimitMb();
  log(
    `${os.cpus().length} CPUs (${os.cpus()[0]?.model}), node ${process.version}, load average ${loadAverage()}, ` +
      `server memory limit ${limitMb > 0 ? `${limitMb} MiB` : 'none'}; servers' logs in ${LOG_DIR}`,
  );
  const cache = { cache: !args.has('no-cache') };
  if (STARTS > 0) {
    const cluster = await startLargeCluster({ nodes: NODES, pods: PODS, namespaces: NAMESPACES }, cache);
    try {
      await starts(cluster, generateTestKeys().es256);
    } finally {
      await cluster.stop();
    }
    return;
  }
  const withPods = await startLargeCluster({ nodes: NODES, pods: PODS, namespaces: NAMESPACES }, cache);
  let withoutPods: LargeCluster | undefined;
  try {
    withoutPods = await startLargeCluster({ nodes: NODES, pods: 0, namespaces: NAMESPACES }, cache);
    const keys = generateTestKeys();
    const targets: Record<Mode, Target> = {
      with: await prepare(withPods, keys.es256),
      without: await prepare(withoutPods, keys.es256),
    };
    const samples: Record<Mode, Sample[]> = { with: [], without: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so drift on a shared machine does not favour one.
      const order: Mode[] = round % 2 ? ['without', 'with'] : ['with', 'without'];
      for (const mode of order) samples[mode].push(await measure(targets[mode], mode, round));
    }
    const m = (mode: Mode, pick: (s: Sample) => number) => median(samples[mode].map(pick));
    const row = (label: string, pick: (s: Sample) => number, unit: string, target = '') => {
      const [without, withPodsValue] = [m('without', pick), m('with', pick)];
      const perRound = samples.with.map((w, k) => signed(pick(w) - pick(samples.without[k]!))).join(', ');
      return (
        `| ${label} | ${fmt(without)} ${unit} | ${fmt(withPodsValue)} ${unit} | ` +
        `**${signed(withPodsValue - without, 1)} ${unit}**${target} (rounds ${perRound}) |`
      );
    };
    // Each round's pair ran back to back, so its ratio is the least exposed to the machine's drift.
    const ratio = (label: string, pick: (s: Sample) => number, target = '') => {
      const perRound = median(samples.with.map((w, k) => pick(w) / pick(samples.without[k]!)));
      return (
        `| ${label} | ${fmt(m('without', pick))} | ${fmt(m('with', pick))} | ` +
        `**${fmt(m('with', pick) / m('without', pick), 2)}**${target} (per round ${fmt(perRound, 2)}) |`
      );
    };
    const seeded = withPods.report.restored ? 'restored from the fixture cache; seeded' : 'seeded';
    const lines = [
      `real server (src/main.ts, memory limit ${limitMb > 0 ? `${limitMb} MiB` : 'none'}, token from /oauth/token); ` +
        `${fmt(PODS)} pods in ${fmt(NAMESPACES)} namespaces on ${fmt(NODES)} nodes (${seeded} at ` +
        `${fmt(withPods.report.podsPerSecond)} pods/s) vs the same nodes and namespaces without pods; medians of ` +
        `${ROUNDS} rounds, ${DURATION_S} s runs, ${CONNECTIONS} connections, page = limit=10&sortBy=name; ` +
        `load average at the end ${loadAverage()}`,
      '',
      '| | without pods | with pods | with − without / ratio |',
      '|---|---|---|---|',
      row('RSS at ready (after the start-up release)', (s) => s.readyRssMb, 'MB', ' (target ≤ 40 MB)'),
      row('RSS after the load runs', (s) => s.loadedRssMb, 'MB', ' (target ≤ 40 MB)'),
      row('peak RSS (VmHWM)', (s) => s.peakRssMb, 'MB'),
      row('V8 heap used after the load', (s) => s.heapUsedMb, 'MB'),
      row('V8 heap committed after the load', (s) => s.heapTotalMb, 'MB'),
      row('external (Buffers) after the load', (s) => s.externalMb, 'MB'),
      `| start to ready | ${fmt(
        m('without', (s) => s.readySeconds),
        1,
      )} s | ${fmt(
        m('with', (s) => s.readySeconds),
        1,
      )} s | |`,
      ratio('page req/s, quiet', (s) => s.quiet.requestsPerSecond, ' (target ≥ 0.9)'),
      ratio(`page req/s, ${CHURN_PER_S} pods/s created+deleted`, (s) => s.churned.requestsPerSecond),
      `| page p99, quiet | ${fmt(m('without', (s) => s.quiet.p99Ms))} ms | ${fmt(m('with', (s) => s.quiet.p99Ms))} ms | |`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await withoutPods?.stop();
    await withPods.stop();
  }
}

await main();
