// Node list benchmark on the REAL server: src/main.ts as operators run it (metrics, access log at its
// default, bearer check of the platform's own tokens, SubjectAccessReview-backed authorization, the
// Kubernetes proxy), with tokens from /oauth/token, against a private real control plane seeded with
// realistic nodes. Every server and load generator runs in its own process on this machine.
//
//   npm run bench:nodes                     5,000 nodes, 10 s per run, 3 rounds (medians)
//   npm run bench:nodes -- --quick          1,000 nodes, 3 s per run
//   npm run bench:nodes -- --nodes=20000    scale
//   npm run bench:nodes -- --soak=600       10-minute mixed soak: RSS over time (not for CI)
//   npm run bench:nodes -- --scale --nodes=20000   only what grows with the node count: time to ready,
//                                           RSS and heap, page p50/p99, bytes per cached node
//   BENCH_PROFILE=/tmp/prof npm run bench:nodes -- --quick   also a CPU profile of the server
//   npm run bench:nodes -- --quick --storm  only the login storm, with where the cores went;
//                                           BENCH_POOL_SCHED=idle also moves the server's pool threads
//                                           to SCHED_IDLE (chrt; an experiment, not what the server does);
//                                           --storm-replica sends the logins to a second replica and probes
//                                           the first (the event loop without login work; an experiment)
//   npm run bench:nodes -- --quick --proxy [--baseline=DIR]   only the proxy part beside nginx (proxy_vs_nginx), with CPU ms per request
//                                           of our server and the kube-apiserver; DIR: another checkout
//                                           (its src/main.ts) run beside ours, rounds interleaved
//   npm run bench:nodes -- --quick --page [--baseline=DIR]    only the node page (a), with CPU µs per request,
//                                           beside the ceilings (d) bare node:http and (e) bare Express;
//                                           with DIR as above. For a small change, pin the processes:
//                                           BENCH_LOAD_CPUS=0 taskset -c 1 node test/bench/nodes-bench.ts …
//                                           (the servers on core 1, the load generator on core 0)
//   npm run bench:nodes -- --quick --spread [--spread-starts=N]   only the start spread: N (10) fresh
//                                           servers, the page's CPU per request in each
//   BENCH_LOADER=autocannon npm run bench:nodes   load from autocannon instead of wrk (the earlier instrument)
//
// Prerequisites: wrk and nginx, Debian packages installed with apt-get on first use when missing.
// `npm run bench:nodes` runs this and then pods-bench.ts with the same flags (bench-nodes.ts).
// Figures go to stderr as they come and to stdout at the end; the LAST line of stdout is one JSON object
// (a_b, a_d, rss_peak_mb, proxy_vs_nginx, storm_p99_vs_control, logins_vs_pool, start_spread, …) for
// scripts. docs/benchmarks.md records the results.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import bcrypt from 'bcrypt';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { createNodes } from '../cluster/node-fixtures.ts';
import { httpGet } from '../support/http-client.ts';
import { sampleSum } from '../support/metrics-exposition.ts';
import { generateTestKeys } from '../support/iam-fixtures.ts';
import {
  BENCH_GROUP,
  BENCH_PASSWORD,
  createBenchUsers,
  distinctTokens,
  login,
  refresh,
} from './bench-identities.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import type { StormResult, StormSpec } from './login-storm.ts';
import type { ProbeFigures, ProbeResult, ProbeSpec } from './paced-probe.ts';
import { lowerThreadPoolPriority, threadPoolThreadIds } from '../../src/http/thread-pool-priority.ts';
import { statCpuMs } from './proc-cpu.ts';
import { runLoad, type Loader } from './run-load.ts';
import { startRealServer, type RealServer } from './real-server.ts';
import { startNginxProxy, type NginxProxy } from './nginx-proxy.ts';
import { IC_MISS_SYMBOL, perfRecord, perfSymbols } from './perf-profile.ts';
import { benchArgs, childrenKilledOnExit } from './bench-args.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = benchArgs();
const QUICK = args.has('quick');
const NODES = Number(args.get('nodes') ?? (QUICK ? 1000 : 5000));
const DURATION_S = Number(args.get('duration') ?? (QUICK ? 3 : 10));
const WARMUP_S = QUICK ? 1 : 2;
/** The proxies' one warm-up before their rounds (see the proxy part). */
const PROXY_WARMUP_S = QUICK ? 5 : 15;
const ROUNDS = Number(args.get('rounds') ?? 3);
const CONNECTIONS = Number(args.get('connections') ?? 10);
const SCALE = args.has('scale');
const PROXY_ONLY = args.has('proxy');
const PAGE_ONLY = args.has('page');
// Cores for the load generator (taskset's list), so that it does not share one with the server under test.
const LOAD_CPUS = process.env['BENCH_LOAD_CPUS'];
// The load generator of the throughput runs: wrk, as the issue measured, unless BENCH_LOADER=autocannon (the
// instrument of the figures recorded before the wrk runs of 2026-11-26). Paced loads (the soak) use autocannon.
const LOADER: Loader = process.env['BENCH_LOADER'] === 'autocannon' ? 'autocannon' : 'wrk';
const STORM_ONLY = args.has('storm');
// With --storm: the logins go to a second replica of the server, the probes to the first; what a server
// whose login work runs apart from the event loop that answers the probes could reach at best.
const STORM_REPLICA = args.has('storm-replica');
const SPREAD_ONLY = args.has('spread');
const BASELINE = args.get('baseline');
const SOAK_S = args.has('soak') ? Number(args.get('soak') === 'true' ? 600 : args.get('soak')) : 0;
const TOKEN_USERS = 100;
const TOKENS_PER_USER = 10;
const STORM_CLIENTS = 20;
// The server's default http.threadPoolNice: the bare pool's threads run at the same priority.
const POOL_NICE = 10;
// Fresh server starts for start_spread (--spread-starts=N; 0: none).
const SPREAD_STARTS = Number(args.get('spread-starts') ?? 10);
const SPREAD_ROUNDS = Number(args.get('spread-rounds') ?? 5);
const SPREAD_DURATION_S = Math.min(DURATION_S, 5);
// A directory for perf samples of each start's last round (perf-profile.ts); none by default.
const SPREAD_PERF = process.env['BENCH_SPREAD_PERF'];
// With --proxy, a directory for perf samples of each proxy's measured runs (ours, nginx, (q)); none by default.
const PROXY_PERF = process.env['BENCH_PROXY_PERF'];
const PREFIX = 'bench';
const CORES = os.availableParallelism();

const children = childrenKilledOnExit();
const log = (line: string) => process.stderr.write(`# ${line}\n`);
const fmt = (n: number, digits = 0) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : 'n/a';
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Runs a TypeScript entry of this folder in its own process; resolves with its stdout. */
function runChild(entry: string, argv: string[]): Promise<string> {
  const child = spawn(process.execPath, [path.join(here, entry), ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve) => child.once('exit', () => resolve(out)));
}

/** Starts a helper server that prints its URL as its first stdout line. */
function startHelper(
  entry: string,
  argv: string[],
  env: Record<string, string> = {},
): Promise<{ url: string; pid: number }> {
  const child = spawn(process.execPath, [path.join(here, entry), ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (c: Buffer) => resolve({ url: c.toString().trim(), pid: child.pid! }));
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
}

const load = (spec: LoadSpec) => runLoad(spec, { children, cpus: LOAD_CPUS, loader: LOADER });

/**
 * A short warm-up run (JIT, pools, caches), then the measured run; with `cpuOf`, the CPU ms per request
 * (from /proc) of that process during the measured run, pushed to `cpuMsPerRequest`.
 */
async function measure(
  label: string,
  spec: Omit<LoadSpec, 'durationSeconds'>,
  cpu?: { pid: number; msPerRequest: number[] },
): Promise<LoadResult> {
  await load({ ...spec, durationSeconds: WARMUP_S });
  const before = cpu ? cpuMs(cpu.pid) : 0;
  const result = await load({ ...spec, durationSeconds: DURATION_S });
  if (cpu) cpu.msPerRequest.push((cpuMs(cpu.pid) - before) / Math.max(1, result.requests));
  const failed = result.non2xx + result.errors + result.timeouts;
  log(
    `${label}: ${fmt(result.requestsPerSecond)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms` +
      (cpu ? `; ${fmt(cpu.msPerRequest.at(-1)!, 3)} CPU ms/request` : '') +
      (failed ? `, ${failed} failed` : ''),
  );
  return result;
}

/**
 * Each proxy's steady state, once, before the rounds: a Node process's CPU per proxied request still
 * falls by a fifth over its first minute of load (0.37 → 0.29 ms over five quick rounds: V8 tiering up
 * the hot paths), which each run's short warm-up does not cover. nginx, compiled ahead of time, and a
 * baseline get the same warm-up.
 */
async function warmProxies(targets: { url: string; headers?: Record<string, string> }[]): Promise<void> {
  for (const target of targets)
    await load({ ...target, connections: CONNECTIONS, durationSeconds: PROXY_WARMUP_S });
}

/** Samples the server's RSS every second while `work` runs; returns the highest sample. */
async function sampledPeak<T>(
  server: RealServer,
  work: () => Promise<T>,
): Promise<{ value: T; peakMb: number }> {
  let peak = server.memory().rssMb;
  const timer = setInterval(() => (peak = Math.max(peak, server.memory().rssMb)), 1000);
  try {
    const value = await work();
    return { value, peakMb: Math.max(peak, server.memory().rssMb) };
  } finally {
    clearInterval(timer);
  }
}

interface Setup {
  cp: ControlPlane;
  kc: KubeConfig;
  serverArgs: string[];
  users: string[];
  stormUser: string;
  seedSeconds: number;
}

async function setUp(cp: ControlPlane): Promise<Setup> {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  kc.setCurrentContext('admin');
  const seedStart = Date.now();
  await createNodes(kc.makeApiClient(CoreV1Api), NODES, { prefix: PREFIX, concurrency: 32 });
  const seedSeconds = (Date.now() - seedStart) / 1000;
  log(`seeded ${fmt(NODES)} nodes in ${seedSeconds.toFixed(1)} s`);
  // Cost 10 for the token holders (fast to set up); the storm's user has the default cost, 12.
  const users = await createBenchUsers(kc, { prefix: 'bench-user', count: TOKEN_USERS, cost: 10 });
  const [stormUser] = await createBenchUsers(kc, { prefix: 'bench-storm', count: 1, cost: 12 });
  const keys = generateTestKeys();
  const serverArgs = [
    `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
    `--auth.signingKeyFile=${keys.es256}`,
    '--auth.addressRequestsPerMinute=0',
    '--auth.lockout.maxFailures=100',
    // To try a setting before it becomes the default, e.g. BENCH_SERVER_ARGS=--http.threadPoolNice=19.
    ...(process.env['BENCH_SERVER_ARGS'] ?? '').split(' ').filter(Boolean),
  ];
  return { cp, kc, serverArgs, users, stormUser: stormUser!, seedSeconds };
}

async function main() {
  log(
    `${CORES} CPUs (${os.cpus()[0]?.model}), node ${process.version}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; load generator ${LOADER}`,
  );
  const cp = await startControlPlane();
  try {
    const setup = await setUp(cp);
    if (SOAK_S > 0) await soak(setup);
    else if (SCALE) await scale(setup);
    else if (PROXY_ONLY) await proxyOnly(setup);
    else if (PAGE_ONLY) await pageOnly(setup);
    else if (STORM_ONLY) await stormOnly(setup);
    else if (SPREAD_ONLY) {
      const spread = await startSpread(setup);
      process.stdout.write(
        `${spreadLine(spread)}\n${JSON.stringify(roundAll({ nodes: NODES, ...spreadFigures(spread) }))}\n`,
      );
    } else await benchmark(setup);
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await cp.stop();
  }
}

async function benchmark(setup: Setup) {
  const { cp, serverArgs } = setup;
  const profile = process.env['BENCH_PROFILE'];
  const server = await startRealServer({
    args: serverArgs,
    dir: cp.dir,
    name: 'server',
    ...(profile ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profile}`] } : {}),
  });
  const afterReady = server.memory();
  const heapReady = await server.heap();
  log(
    `server ready in ${server.readySeconds.toFixed(1)} s, RSS ${fmt(afterReady.rssMb)} MB, memory limit ${server.memoryLimit}`,
  );
  const one = (await login(server.url, setup.users[0]!)).access;
  const tokenStart = Date.now();
  const tokens = await distinctTokens(server.url, setup.users, TOKENS_PER_USER);
  log(
    `${tokens.length} distinct tokens for ${setup.users.length} users in ${((Date.now() - tokenStart) / 1000).toFixed(1)} s`,
  );

  const nodesUrl = `${server.url}/kapis/resources.platform.io/v1alpha3/nodes`;
  const pageUrl = `${nodesUrl}?limit=10&sortBy=name`;
  const bearer = { Authorization: `Bearer ${one}` };
  const page = await httpGet(pageUrl, bearer);
  if (page.status !== 200) throw new Error(`our list answered ${page.status}: ${page.body.toString()}`);
  const fullBytes = (await httpGet(nodesUrl, bearer)).body.length;
  const fullGzipBytes = (await httpGet(nodesUrl, { ...bearer, 'Accept-Encoding': 'gzip' })).body.length;
  const bodyFile = path.join(cp.dir, 'page.json');
  writeFileSync(bodyFile, page.body);
  const { url: bareUrl } = await startHelper('bare-server.ts', [bodyFile]);
  const { url: bareExpressUrl } = await startHelper('bare-express.ts', [bodyFile]);
  const bareProxy = await startBareProxy(setup);
  const nginx = await startNginx(setup);
  const admin = { Authorization: `Bearer ${cp.admin.token}` };
  const kube = { headers: admin, caPem: cp.caPem };
  // CPU ms per proxied request: ours and nginx's, the proxy's control.
  const proxyCpu = {
    ours: { pid: server.pid, msPerRequest: [] as number[] },
    nginx: { pid: nginx.pid, msPerRequest: [] as number[] },
  };
  const proxyPath = '/api/v1/nodes?limit=10';

  const runs = {
    a1: [] as LoadResult[],
    aMany: [] as LoadResult[],
    b: [] as LoadResult[],
    d: [] as LoadResult[],
    e: [] as LoadResult[],
    proxy: [] as LoadResult[],
    bareProxy: [] as LoadResult[],
    nginx: [] as LoadResult[],
    direct: [] as LoadResult[],
    directImpersonating: [] as LoadResult[],
    full: [] as LoadResult[],
    fullGzip: [] as LoadResult[],
  };
  const { peakMb: loadPeakMb } = await sampledPeak(server, async () => {
    await warmProxies([
      { url: `${server.url}${proxyPath}`, headers: bearer },
      { url: `${nginx.url}${proxyPath}` },
    ]);
    for (let round = 1; round <= ROUNDS; round++) {
      log(`round ${round} of ${ROUNDS}`);
      runs.a1.push(
        await measure('(a) ours, page, one token', {
          url: pageUrl,
          headers: bearer,
          connections: CONNECTIONS,
        }),
      );
      runs.aMany.push(
        await measure(`(a) ours, page, ${tokens.length} tokens`, {
          url: pageUrl,
          tokens,
          connections: CONNECTIONS,
        }),
      );
      runs.b.push(
        await measure('(b) kube-apiserver LIST limit=10', {
          url: `${cp.server}${proxyPath}`,
          connections: CONNECTIONS,
          ...kube,
        }),
      );
      runs.d.push(
        await measure('(d) bare node:http, same bytes', { url: bareUrl, connections: CONNECTIONS }),
      );
      runs.e.push(
        await measure('(e) bare Express, same bytes', {
          url: `${bareExpressUrl}/kapis/resources.platform.io/v1alpha3/nodes?limit=10&sortBy=name`,
          connections: CONNECTIONS,
        }),
      );
      // Ours and its control back to back, the order alternating: the ratio of one round is the least
      // exposed to what else the machine does.
      const proxied = {
        ours: () =>
          measure(
            '(p) ours, proxy /api/v1/nodes?limit=10',
            { url: `${server.url}${proxyPath}`, headers: bearer, connections: CONNECTIONS },
            proxyCpu.ours,
          ),
        nginx: async () => {
          const result = await measure(
            '(n) nginx, same path, same credential and impersonation',
            { url: `${nginx.url}${proxyPath}`, connections: CONNECTIONS },
            proxyCpu.nginx,
          );
          if (result.non2xx + result.errors)
            throw new Error(
              `nginx failed ${result.non2xx + result.errors} requests; see ${cp.dir}/nginx-error.log`,
            );
          return result;
        },
      };
      if (round % 2) {
        runs.proxy.push(await proxied.ours());
        runs.nginx.push(await proxied.nginx());
      } else {
        runs.nginx.push(await proxied.nginx());
        runs.proxy.push(await proxied.ours());
      }
      runs.bareProxy.push(
        await measure('(q) the smallest Node proxy, same path', {
          url: `${bareProxy.url}${proxyPath}`,
          connections: CONNECTIONS,
        }),
      );
      runs.direct.push(
        await measure('(p) kube-apiserver directly, same path', {
          url: `${cp.server}${proxyPath}`,
          connections: CONNECTIONS,
          ...kube,
        }),
      );
      // What the proxy sends upstream: the same request, impersonating the user (the kube-apiserver
      // authorizes the impersonation on every request; that cost is not the proxy's).
      runs.directImpersonating.push(
        await measure('(p) kube-apiserver directly, impersonating', {
          url: `${cp.server}${proxyPath}`,
          connections: CONNECTIONS,
          caPem: cp.caPem,
          headers: { ...admin, 'Impersonate-User': setup.users[0]!, 'Impersonate-Group': BENCH_GROUP },
        }),
      );
      runs.full.push(
        await measure('(c) ours, full list', { url: nodesUrl, headers: bearer, connections: 2 }),
      );
      runs.fullGzip.push(
        await measure('(c) ours, full list, gzip', {
          url: nodesUrl,
          headers: { ...bearer, 'Accept-Encoding': 'gzip' },
          connections: 2,
        }),
      );
    }
  });
  const afterLoad = server.memory();
  const heapAfterLoad = await server.heap();

  await nginx.stop();
  const storm = await loginStorm(server, setup.stormUser, one, setup.cp.pids, setup.cp.dir);
  const volume = await logVolumes(setup, one);
  const stopped = server.memory();
  await server.stop();
  const spread = await startSpread(setup);

  const m = (rs: LoadResult[], pick: (r: LoadResult) => number = (r) => r.requestsPerSecond) =>
    median(rs.map(pick));
  const figures = {
    nodes: NODES,
    rounds: ROUNDS,
    loader: LOADER,
    duration_s: DURATION_S,
    cores: CORES,
    a_rps: m(runs.a1),
    a_many_tokens_rps: m(runs.aMany),
    b_rps: m(runs.b),
    d_rps: m(runs.d),
    a_b: m(runs.a1) / m(runs.b),
    a_d: m(runs.a1) / m(runs.d),
    a_many_d: m(runs.aMany) / m(runs.d),
    e_rps: m(runs.e),
    a_e: m(runs.a1) / m(runs.e),
    e_b: m(runs.e) / m(runs.b),
    a_p50_ms: m(runs.a1, (r) => r.p50Ms),
    a_p99_ms: m(runs.a1, (r) => r.p99Ms),
    proxy_rps: m(runs.proxy),
    direct_rps: m(runs.direct),
    proxy_ratio: m(runs.proxy) / m(runs.direct),
    direct_impersonating_rps: m(runs.directImpersonating),
    proxy_vs_impersonating_ratio: m(runs.proxy) / m(runs.directImpersonating),
    bare_proxy_rps: m(runs.bareProxy),
    bare_proxy_ratio: m(runs.bareProxy) / m(runs.direct),
    proxy_vs_bare_proxy: m(runs.proxy) / m(runs.bareProxy),
    nginx_rps: m(runs.nginx),
    proxy_vs_nginx: median(runs.proxy.map((r, i) => r.requestsPerSecond / runs.nginx[i]!.requestsPerSecond)),
    proxy_cpu_ms_per_request: median(proxyCpu.ours.msPerRequest),
    nginx_cpu_ms_per_request: median(proxyCpu.nginx.msPerRequest),
    full_rps: m(runs.full),
    full_gzip_rps: m(runs.fullGzip),
    full_mb: fullBytes / 1e6,
    full_gzip_mb: fullGzipBytes / 1e6,
    ready_s: server.readySeconds,
    memory_limit: server.memoryLimit,
    oom_kills: server.oomKills(),
    rss_ready_mb: afterReady.rssMb,
    rss_after_load_mb: afterLoad.rssMb,
    rss_end_mb: stopped.rssMb,
    rss_peak_mb: Math.max(stopped.peakRssMb, loadPeakMb),
    heap_ready: heapReady,
    heap_after_load: heapAfterLoad,
    ...stormFigures(storm),
    log_mb_per_min_at_1k_rps: volume,
    ...spreadFigures(spread),
  };
  const table = (label: string, rs: LoadResult[]) =>
    `| ${label} | ${fmt(m(rs))} | ${m(rs, (r) => r.p50Ms)} | ${m(rs, (r) => r.p99Ms)} | ${rs.reduce((s, r) => s + r.non2xx + r.errors + r.timeouts, 0)} |`;
  const lines = [
    `nodes: ${fmt(NODES)}; seeding ${setup.seedSeconds.toFixed(1)} s; server spawn to ready ${server.readySeconds.toFixed(1)} s`,
    `machine: ${CORES} CPUs, ${os.cpus()[0]?.model}; node ${process.version}; ${ROUNDS} rounds (medians), ${DURATION_S} s per run after a ${WARMUP_S} s warm-up; ${CONNECTIONS} connections unless noted; load average at the end ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
    `full list body: ${fmt(fullBytes / 1e6, 1)} MB (${fmt(fullGzipBytes / 1e6, 2)} MB gzip); page body: ${fmt(page.body.length / 1e3, 1)} kB`,
    '',
    '| run | req/s | p50 ms | p99 ms | failed |',
    '|---|---:|---:|---:|---:|',
    table('(a) ours: `limit=10&sortBy=name`, one token', runs.a1),
    table(`(a) ours: same, ${tokens.length} distinct tokens of ${setup.users.length} users`, runs.aMany),
    table('(b) kube-apiserver: LIST `limit=10`', runs.b),
    table('(d) bare node:http, prebuilt bytes of (a)', runs.d),
    table('(e) bare Express, one route: the same bytes and headers', runs.e),
    table('(p) ours: proxy `/api/v1/nodes?limit=10` (impersonating)', runs.proxy),
    table('(q) the smallest Node proxy: same path, same impersonation', runs.bareProxy),
    table('(n) nginx: same path, same credential and impersonation (one worker)', runs.nginx),
    table('(p) kube-apiserver directly: same path', runs.direct),
    table('(p) kube-apiserver directly: same path, impersonating the user', runs.directImpersonating),
    table('(c) ours: full list (2 connections)', runs.full),
    table('(c) ours: full list, gzip (2 connections)', runs.fullGzip),
    '',
    `a/b: ${fmt(figures.a_b, 1)}× (goal ≥ 15); a/d: ${fmt(figures.a_d, 2)} (goal ≥ 0.5), with ${tokens.length} tokens ${fmt(figures.a_many_d, 2)}; a/e: ${fmt(figures.a_e, 2)}, e/b: ${fmt(figures.e_b, 1)}× (Express's own ceiling against the kube-apiserver)`,
    `proxy ÷ nginx: ${fmt(figures.proxy_vs_nginx, 2)} (goal ≥ 0.85; median of the rounds' ratios); CPU ms per proxied request: ours ${fmt(figures.proxy_cpu_ms_per_request, 3)}, nginx ${fmt(figures.nginx_cpu_ms_per_request, 3)}`,
    `proxy/direct: ${fmt(figures.proxy_ratio, 2)}; proxy/direct impersonating: ${fmt(figures.proxy_vs_impersonating_ratio, 2)}; the smallest Node proxy/direct: ${fmt(figures.bare_proxy_ratio, 2)}, ours/it ${fmt(figures.proxy_vs_bare_proxy, 2)}`,
    ...stormLines(storm),
    spreadLine(spread),
    `access log, MB per minute at 1,000 req/s (mix: 90% page reads, 5% probes, 5% 404s): ${Object.entries(
      volume,
    )
      .map(([mode, mb]) => `${mode} ${fmt(mb, 2)}`)
      .join(', ')}`,
    `memory (MB) ready → after the rounds: V8 heap ${fmt(heapReady.heapTotalMb)} → ${fmt(heapAfterLoad.heapTotalMb)} (used ${fmt(heapReady.heapUsedMb)} → ${fmt(heapAfterLoad.heapUsedMb)}; new space ${fmt(heapReady.newSpaceMb)} → ${fmt(heapAfterLoad.newSpaceMb)}), external ${fmt(heapReady.externalMb)} → ${fmt(heapAfterLoad.externalMb)}, other native ${fmt(heapReady.otherMb)} → ${fmt(heapAfterLoad.otherMb)}`,
    `server RSS: ${fmt(afterReady.rssMb)} MB ready, ${fmt(afterLoad.rssMb)} MB after the rounds, ${fmt(stopped.rssMb)} MB at the end, peak ${fmt(figures.rss_peak_mb)} MB (goal ≤ 300)`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  process.stdout.write(JSON.stringify(roundAll(figures)) + '\n');
}

/** Only the login storm (`--storm`): its figures, where the cores went, and one JSON line. */
async function stormOnly(setup: Setup) {
  const profile = process.env['BENCH_PROFILE'];
  const server = await startRealServer({
    args: setup.serverArgs,
    dir: setup.cp.dir,
    name: 'storm',
    ...(profile ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profile}`] } : {}),
  });
  if (process.env['BENCH_POOL_SCHED'] === 'idle')
    log(`pool threads moved to SCHED_IDLE: ${schedIdle(server.pid)}`);
  const one = (await login(server.url, setup.users[0]!)).access;
  const replica = STORM_REPLICA
    ? await startRealServer({ args: setup.serverArgs, dir: setup.cp.dir, name: 'storm-replica' })
    : undefined;
  const storm = await loginStorm(server, setup.stormUser, one, setup.cp.pids, setup.cp.dir, replica);
  await replica?.stop();
  await server.stop();
  const policy = process.env['BENCH_POOL_SCHED'] ?? 'nice';
  const where = STORM_REPLICA ? 'logins on a second replica' : 'logins and probes on one server';
  process.stdout.write(
    [`nodes: ${fmt(NODES)}; pool threads: ${policy}; ${where}`, ...stormLines(storm)].join('\n') + '\n',
  );
  process.stdout.write(
    JSON.stringify(
      roundAll({ nodes: NODES, pool_sched: policy, storm_replica: STORM_REPLICA, ...stormFigures(storm) }),
    ) + '\n',
  );
}

type Storm = Awaited<ReturnType<typeof loginStorm>>;

/** The login storm's figures in the benchmark's JSON line. */
function stormFigures(storm: Storm) {
  return {
    login_healthz_p99_ratio: storm.healthzP99Ratio,
    login_page_p99_ratio: storm.pageP99Ratio,
    login_healthz_p99_ms: storm.healthzP99Ms,
    login_healthz_baseline_p99_ms: storm.healthzBaselineP99Ms,
    login_page_p99_ms: storm.pageP99Ms,
    login_page_baseline_p99_ms: storm.pageBaselineP99Ms,
    login_bare_p99_ratio: storm.bareP99Ratio,
    login_bare_p99_ms: storm.bareP99Ms,
    login_bare_baseline_p99_ms: storm.bareBaselineP99Ms,
    storm_p99_vs_control: storm.healthzP99Ratio / storm.bareP99Ratio,
    storm_page_p99_vs_control: storm.pageP99Ratio / storm.bareP99Ratio,
    // The same division for the control's twin: what the instrument reads for two identical servers.
    storm_twin_vs_control: storm.twinP99Ratio / storm.bareP99Ratio,
    login_twin_p99_ms: storm.twinP99Ms,
    login_twin_baseline_p99_ms: storm.twinBaselineP99Ms,
    logins_per_s: storm.loginsPerSecond,
    pool_compares_per_s: storm.poolComparesPerSecond,
    logins_vs_pool: storm.loginsVsPool,
    login_compare_ms: storm.compareMs.normal,
    login_compare_niced_ms: storm.compareMs.niced,
    logins_ratio: storm.loginsRatio,
    logins_ratio_niced: storm.loginsRatioNiced,
    login_storm_cores: storm.cores,
    logins_per_pool_cpu_ratio: storm.loginsPerPoolCpuRatio,
    login_503s: storm.refused,
    login_503_p99_ms: storm.refusedP99Ms,
  };
}

/** The login storm's lines of the printed summary. */
function stormLines(storm: Storm): string[] {
  return [
    `login storm (${STORM_CLIENTS} clients, bcrypt cost 12): /healthz p99 ${fmt(storm.healthzBaselineP99Ms, 2)} → ${fmt(storm.healthzP99Ms, 2)} ms (${fmt(storm.healthzP99Ratio, 2)}×), page p99 ${fmt(storm.pageBaselineP99Ms, 2)} → ${fmt(storm.pageP99Ms, 2)} ms (${fmt(storm.pageP99Ratio, 2)}×) (the same bytes from a bare node:http server, the control: ${fmt(storm.bareBaselineP99Ms, 2)} → ${fmt(storm.bareP99Ms, 2)} ms, ${fmt(storm.bareP99Ratio, 2)}×; ours ÷ the control: /healthz ${fmt(storm.healthzP99Ratio / storm.bareP99Ratio, 2)} (goal ≤ 1.25), page ${fmt(storm.pageP99Ratio / storm.bareP99Ratio, 2)}; the control's twin (A/A): ${fmt(storm.twinBaselineP99Ms, 2)} → ${fmt(storm.twinP99Ms, 2)} ms, ÷ the control ${fmt(storm.twinP99Ratio / storm.bareP99Ratio, 2)}); ${fmt(storm.loginsPerSecond, 1)} logins/s vs the bare pool's ${fmt(storm.poolComparesPerSecond, 1)} compares/s in the same storm: ${fmt(storm.loginsVsPool, 2)} (goal ≥ 0.9); vs ${CORES} cores ÷ ${fmt(storm.compareMs.normal)} ms = ${fmt(storm.loginsRatio, 2)}, vs a compare at the pool's priority (${fmt(storm.compareMs.niced)} ms) ${fmt(storm.loginsRatioNiced, 2)}; ${storm.refused} refused with 503 (p99 ${storm.refusedP99Ms} ms)`,
    `login storm, cores used (medians): the server's pool ${fmt(storm.cores.pool, 2)}, the rest of the server ${fmt(storm.cores.serverOther, 2)}, kube-apiserver ${fmt(storm.cores.apiserver, 2)}, etcd ${fmt(storm.cores.etcd, 2)}, everything else ${fmt(storm.cores.rest, 2)}, idle ${fmt(storm.cores.idle, 2)}; logins/s vs the pool's CPU ÷ one compare: ${fmt(storm.loginsPerPoolCpuRatio, 2)}`,
  ];
}

/** Moves a process's libuv pool threads to SCHED_IDLE with util-linux's chrt; how many it moved. */
function schedIdle(pid: number): number {
  return threadPoolThreadIds(`/proc/${pid}/task`).filter(
    (tid) => spawnSync('chrt', ['--idle', '-p', '0', String(tid)]).status === 0,
  ).length;
}

/** nginx in front of the same kube-apiserver, as our proxy is (nginx-proxy.ts). */
function startNginx(setup: Setup): Promise<NginxProxy> {
  const caFile = path.join(setup.cp.dir, 'nginx-ca.pem');
  writeFileSync(caFile, setup.cp.caPem);
  return startNginxProxy({
    upstream: setup.cp.server,
    caFile,
    token: setup.cp.admin.token,
    user: setup.users[0]!,
    group: BENCH_GROUP,
    dir: setup.cp.dir,
    children,
  });
}

/**
 * Fresh starts of the server against the same cluster: SPREAD_STARTS processes, each started, synced and
 * warmed up (one page run) in turn, then all kept running and measured in SPREAD_ROUNDS interleaved rounds
 * (the order reversed every other round): the server's CPU per page request in each process, from /proc. A
 * process that is slow for its life is slow in every round; what the machine's other work does to one run
 * is not. Each process's figure is the median, over the rounds, of its CPU per request ÷ the round's
 * median; absolute figures beside them.
 */
async function startSpread(setup: Setup): Promise<Spread> {
  const pagePath = '/kapis/resources.platform.io/v1alpha3/nodes?limit=10&sortBy=name';
  const started: { server: RealServer; spec: Omit<LoadSpec, 'durationSeconds'> }[] = [];
  try {
    for (let i = 1; i <= SPREAD_STARTS; i++) {
      const server = await startRealServer({ args: setup.serverArgs, dir: setup.cp.dir, name: `start-${i}` });
      await logged(server.logFile, 'start-up memory released');
      const token = (await login(server.url, setup.users[0]!)).access;
      const spec = {
        url: `${server.url}${pagePath}`,
        headers: { Authorization: `Bearer ${token}` },
        connections: CONNECTIONS,
      };
      await load({ ...spec, durationSeconds: WARMUP_S });
      started.push({ server, spec });
      log(`start ${i} of ${SPREAD_STARTS}: ready in ${fmt(server.readySeconds, 1)} s`);
    }
    const cpuUs: number[][] = started.map(() => []);
    const relative: number[][] = started.map(() => []);
    for (let round = 1; round <= SPREAD_ROUNDS; round++) {
      const order = started.map((_, i) => i);
      if (round % 2 === 0) order.reverse();
      const thisRound: number[] = [];
      for (const i of order) {
        const { server, spec } = started[i]!;
        const perfFile =
          SPREAD_PERF && round === SPREAD_ROUNDS ? path.join(SPREAD_PERF, `start-${i + 1}.data`) : '';
        const stopPerf = perfFile ? perfRecord(server.pid, perfFile, children) : undefined;
        const before = cpuMs(server.pid);
        const result = await load({ ...spec, durationSeconds: SPREAD_DURATION_S });
        await stopPerf?.();
        if (result.non2xx + result.errors)
          throw new Error(`start ${i + 1}: ${result.non2xx + result.errors} failed`);
        thisRound[i] = ((cpuMs(server.pid) - before) * 1000) / Math.max(1, result.requests);
        cpuUs[i]!.push(thisRound[i]!);
      }
      const roundMedian = median(thisRound);
      thisRound.forEach((us, i) => relative[i]!.push(us / roundMedian));
      log(
        `spread round ${round} of ${SPREAD_ROUNDS}: CPU µs per request ${thisRound.map((us) => fmt(us, 1)).join(', ')}; load average ${os.loadavg()[0]!.toFixed(1)}`,
      );
    }
    const spread = { cpuUs: cpuUs.map(median), relative: relative.map(median) };
    if (SPREAD_PERF) logPerfShares(spread, cpuUs);
    return spread;
  } finally {
    for (const { server } of started) await server.stop();
  }
}

/**
 * With BENCH_SPREAD_PERF=DIR: each process's last round was sampled by perf; says, process by process, its
 * CPU per request ÷ the median and the share of its samples in V8's inline-cache misses and slow lookups.
 */
function logPerfShares(spread: Spread, cpuUs: number[][]) {
  spread.relative.forEach((relative, i) => {
    const symbols = perfSymbols(path.join(SPREAD_PERF!, `start-${i + 1}.data`));
    const icMiss = symbols.filter((s) => IC_MISS_SYMBOL.test(s.symbol));
    const share = icMiss.reduce((sum, s) => sum + s.percent, 0);
    log(
      `start ${i + 1}: ${fmt(relative, 2)} × the median (last round ${fmt(cpuUs[i]!.at(-1)!, 1)} µs); ` +
        `inline-cache misses and slow lookups ${fmt(share, 1)}% of its samples: ` +
        icMiss
          .slice(0, 4)
          .map((s) => `${s.symbol} ${fmt(s.percent, 1)}%`)
          .join(', ') +
        `; top: ${symbols
          .slice(0, 3)
          .map((s) => `${s.symbol} ${fmt(s.percent, 1)}%`)
          .join(', ')}`,
    );
  });
}

interface Spread {
  /** Each process's median CPU µs per page request. */
  cpuUs: number[];
  /** Each process's median, over the rounds, of its CPU per request ÷ the round's median. */
  relative: number[];
}

function spreadFigures({ cpuUs, relative }: Spread) {
  if (cpuUs.length === 0) return {};
  return {
    starts: cpuUs.length,
    spread_rounds: SPREAD_ROUNDS,
    start_cpu_us_per_request: cpuUs,
    start_relative_cpu: relative,
    start_spread: Math.max(...relative) / median(relative),
    start_spread_absolute: Math.max(...cpuUs) / median(cpuUs),
  };
}

function spreadLine({ cpuUs, relative }: Spread): string {
  if (cpuUs.length === 0) return 'start spread: not measured (--spread-starts=0)';
  return (
    `start spread over ${cpuUs.length} fresh starts, ${SPREAD_ROUNDS} interleaved rounds of ${SPREAD_DURATION_S} s: ` +
    `CPU µs per page request (medians) ${cpuUs.map((us) => fmt(us, 1)).join(', ')}; ` +
    `÷ the round's median ${relative.map((r) => fmt(r, 2)).join(', ')}; ` +
    `slowest ÷ median ${fmt(Math.max(...relative) / median(relative), 2)} (goal ≤ 1.15; absolute ${fmt(Math.max(...cpuUs) / median(cpuUs), 2)})`
  );
}

/** Waits until the server's log holds a line with this message. */
async function logged(logFile: string, message: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const needle = `"message":"${message}"`;
  while (!readFileSync(logFile, 'utf8').includes(needle)) {
    if (Date.now() > deadline) throw new Error(`server did not log "${message}"; see ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The smallest Node proxy (bare-proxy.ts) in front of the same kube-apiserver, impersonating the same
 * user: what any Node proxy gets on this machine, the proxy's counterpart of (d).
 */
function startBareProxy(setup: Setup): Promise<{ url: string; pid: number }> {
  const caFile = path.join(setup.cp.dir, 'bare-proxy-ca.pem');
  writeFileSync(caFile, setup.cp.caPem);
  return startHelper('bare-proxy.ts', [setup.cp.server, caFile, setup.users[0]!, BENCH_GROUP], {
    BARE_PROXY_TOKEN: setup.cp.admin.token,
  });
}

/**
 * Our server (with BENCH_PROFILE=DIR, CPU-profiled into DIR) and, with --baseline=DIR, the server of that
 * checkout (its src/main.ts) beside it, against the same control plane.
 */
async function oursAndBaseline(setup: Setup): Promise<{ ours: RealServer; baseline?: RealServer }> {
  const { cp, serverArgs } = setup;
  const profile = process.env['BENCH_PROFILE'];
  const ours = await startRealServer({
    args: serverArgs,
    dir: cp.dir,
    name: 'server',
    ...(profile ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profile}`] } : {}),
  });
  if (!BASELINE) return { ours };
  const main = path.resolve(BASELINE, 'src/main.ts');
  return { ours, baseline: await startRealServer({ args: serverArgs, dir: cp.dir, name: 'baseline', main }) };
}

/**
 * Only the proxy part (p), and with --baseline=DIR the same requests through DIR's server (another
 * checkout, its src/main.ts) started beside ours: rounds interleaved, so a change is judged against the
 * code before it in the same minutes of a shared machine.
 */
async function proxyOnly(setup: Setup) {
  const { cp } = setup;
  const { ours: server, baseline } = await oursAndBaseline(setup);
  const bareProxy = await startBareProxy(setup);
  const nginx = await startNginx(setup);
  const proxyPath = '/api/v1/nodes?limit=10';
  const token = async (url: string) => ({
    Authorization: `Bearer ${(await login(url, setup.users[0]!)).access}`,
  });
  const ours = await token(server.url);
  const theirs = baseline ? await token(baseline.url) : undefined;
  const admin = { Authorization: `Bearer ${cp.admin.token}` };
  const runs = {
    proxy: [] as LoadResult[],
    baseline: [] as LoadResult[],
    nginx: [] as LoadResult[],
    bareProxy: [] as LoadResult[],
    direct: [] as LoadResult[],
    directImpersonating: [] as LoadResult[],
  };
  // CPU time per request (/proc, user + system) of our server and of the kube-apiserver: what a proxied
  // request costs each process, which a loaded machine does not distort the way it distorts req/s.
  const [, apiserverPid] = cp.pids;
  const cpu = {
    proxy: [] as number[],
    baseline: [] as number[],
    nginx: [] as number[],
    bareProxy: [] as number[],
    apiserverDirect: [] as number[],
    apiserverViaProxy: [] as number[],
  };
  let perfRuns = 0;
  const timed = async (
    label: string,
    spec: Omit<LoadSpec, 'durationSeconds'>,
    pids: { ours?: number; cpuOurs?: number[]; cpuApiserver: number[] },
  ) => {
    await load({ ...spec, durationSeconds: WARMUP_S });
    const perfFile =
      PROXY_PERF && pids.ours !== undefined
        ? path.join(PROXY_PERF, `${label.replace(/\W+/g, '-')}-${++perfRuns}.data`)
        : '';
    const stopPerf = perfFile ? perfRecord(pids.ours!, perfFile, children) : undefined;
    const before = [cpuMs(pids.ours), cpuMs(apiserverPid)];
    const result = await load({ ...spec, durationSeconds: DURATION_S });
    await stopPerf?.();
    if (perfFile) log(`perf samples of ${label} in ${perfFile}, ${result.requests} requests`);
    const per = (i: number, now: number) => (now - before[i]!) / Math.max(1, result.requests);
    if (pids.ours !== undefined) pids.cpuOurs?.push(per(0, cpuMs(pids.ours)));
    pids.cpuApiserver.push(per(1, cpuMs(apiserverPid)));
    log(
      `${label}: ${fmt(result.requestsPerSecond)} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms` +
        (pids.ours !== undefined ? `; server ${fmt(pids.cpuOurs!.at(-1)!, 2)} CPU ms/request` : '') +
        `; kube-apiserver ${fmt(pids.cpuApiserver.at(-1)!, 2)} CPU ms/request` +
        (result.non2xx + result.errors ? `, ${result.non2xx + result.errors} failed` : ''),
    );
    return result;
  };
  await warmProxies([
    { url: `${server.url}${proxyPath}`, headers: ours },
    { url: `${nginx.url}${proxyPath}` },
    ...(baseline && theirs ? [{ url: `${baseline.url}${proxyPath}`, headers: theirs }] : []),
  ]);
  for (let round = 1; round <= ROUNDS; round++) {
    log(`round ${round} of ${ROUNDS}`);
    // Ours and nginx back to back, the order alternating, as in the full benchmark: proxy_vs_nginx.
    const proxied = {
      ours: async () =>
        runs.proxy.push(
          await timed(
            '(p) ours, proxy',
            { url: `${server.url}${proxyPath}`, headers: ours, connections: CONNECTIONS },
            { ours: server.pid, cpuOurs: cpu.proxy, cpuApiserver: cpu.apiserverViaProxy },
          ),
        ),
      nginx: async () => {
        const result = await timed(
          '(n) nginx, same path, same credential and impersonation',
          { url: `${nginx.url}${proxyPath}`, connections: CONNECTIONS },
          { ours: nginx.pid, cpuOurs: cpu.nginx, cpuApiserver: [] },
        );
        if (result.non2xx + result.errors)
          throw new Error(
            `nginx failed ${result.non2xx + result.errors} requests; see ${cp.dir}/nginx-error.log`,
          );
        runs.nginx.push(result);
      },
    };
    // The baseline before ours in even rounds, after in odd ones: a process gets cheaper round by round,
    // and one always measured after the other would favour it (an A/A read 1.07 that way).
    const baselineRun = async () => {
      if (baseline && theirs)
        runs.baseline.push(
          await timed(
            '(p) baseline, proxy',
            { url: `${baseline.url}${proxyPath}`, headers: theirs, connections: CONNECTIONS },
            { ours: baseline.pid, cpuOurs: cpu.baseline, cpuApiserver: [] },
          ),
        );
    };
    if (round % 2) {
      await proxied.ours();
      await proxied.nginx();
      await baselineRun();
    } else {
      await baselineRun();
      await proxied.nginx();
      await proxied.ours();
    }
    runs.bareProxy.push(
      await timed(
        '(q) the smallest Node proxy',
        { url: `${bareProxy.url}${proxyPath}`, connections: CONNECTIONS },
        { ours: bareProxy.pid, cpuOurs: cpu.bareProxy, cpuApiserver: [] },
      ),
    );
    runs.direct.push(
      await timed(
        '(p) kube-apiserver directly',
        { url: `${cp.server}${proxyPath}`, connections: CONNECTIONS, headers: admin, caPem: cp.caPem },
        { cpuApiserver: cpu.apiserverDirect },
      ),
    );
    runs.directImpersonating.push(
      await timed(
        '(p) kube-apiserver directly, impersonating',
        {
          url: `${cp.server}${proxyPath}`,
          connections: CONNECTIONS,
          caPem: cp.caPem,
          headers: { ...admin, 'Impersonate-User': setup.users[0]!, 'Impersonate-Group': BENCH_GROUP },
        },
        { cpuApiserver: [] },
      ),
    );
  }
  await nginx.stop();
  await baseline?.stop();
  await server.stop();
  const m = (rs: LoadResult[]) => median(rs.map((r) => r.requestsPerSecond));
  const figures = {
    nodes: NODES,
    rounds: ROUNDS,
    loader: LOADER,
    duration_s: DURATION_S,
    load_average: os.loadavg()[0],
    proxy_rps: m(runs.proxy),
    direct_rps: m(runs.direct),
    direct_impersonating_rps: m(runs.directImpersonating),
    proxy_ratio: m(runs.proxy) / m(runs.direct),
    proxy_vs_impersonating_ratio: m(runs.proxy) / m(runs.directImpersonating),
    proxy_cpu_ms_per_request: median(cpu.proxy),
    nginx_rps: m(runs.nginx),
    proxy_vs_nginx: median(runs.proxy.map((r, i) => r.requestsPerSecond / runs.nginx[i]!.requestsPerSecond)),
    nginx_cpu_ms_per_request: median(cpu.nginx),
    bare_proxy_rps: m(runs.bareProxy),
    bare_proxy_ratio: m(runs.bareProxy) / m(runs.direct),
    bare_proxy_cpu_ms_per_request: median(cpu.bareProxy),
    apiserver_cpu_ms_per_request_direct: median(cpu.apiserverDirect),
    apiserver_cpu_ms_per_request_via_proxy: median(cpu.apiserverViaProxy),
    ...(baseline
      ? {
          baseline_proxy_rps: m(runs.baseline),
          baseline_proxy_ratio: m(runs.baseline) / m(runs.direct),
          ours_vs_baseline: m(runs.proxy) / m(runs.baseline),
          baseline_cpu_ms_per_request: median(cpu.baseline),
        }
      : {}),
  };
  process.stdout.write(
    [
      `proxy only: ${fmt(NODES)} nodes, ${ROUNDS} rounds (medians), ${DURATION_S} s per run, ${CONNECTIONS} connections; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
      `ours ${fmt(figures.proxy_rps)} req/s` +
        (baseline ? `, baseline (${BASELINE}) ${fmt(m(runs.baseline))} req/s` : '') +
        `, direct ${fmt(figures.direct_rps)}, direct impersonating ${fmt(figures.direct_impersonating_rps)}`,
      `proxy/direct: ours ${fmt(figures.proxy_ratio, 2)}` +
        (baseline ? `, baseline ${fmt(m(runs.baseline) / m(runs.direct), 2)}` : '') +
        `; ours/direct impersonating ${fmt(figures.proxy_vs_impersonating_ratio, 2)}; the smallest Node proxy ${fmt(figures.bare_proxy_ratio, 2)}`,
      `proxy ÷ nginx: ${fmt(figures.proxy_vs_nginx, 2)} (goal ≥ 0.85; median of the rounds' ratios; nginx ${fmt(figures.nginx_rps)} req/s)`,
      `CPU ms per request: our server ${fmt(median(cpu.proxy), 3)}, nginx ${fmt(median(cpu.nginx), 3)}` +
        (baseline ? `, baseline server ${fmt(median(cpu.baseline), 2)}` : '') +
        `, the smallest Node proxy ${fmt(median(cpu.bareProxy), 2)}` +
        `; kube-apiserver ${fmt(median(cpu.apiserverDirect), 2)} directly, ${fmt(median(cpu.apiserverViaProxy), 2)} through our proxy`,
    ].join('\n') + '\n',
  );
  process.stdout.write(JSON.stringify(roundAll(figures)) + '\n');
}

/**
 * Only the node page (a), and with --baseline=DIR the same page from DIR's server beside ours, the order
 * alternating each round: what a change to the request path does, judged by CPU per request (from /proc),
 * which varies far less between runs than req/s. Two ceilings are measured in the same rounds: (d) a bare
 * node:http server and (e) a bare Express app, each sending the page's bytes. Their CPU per request splits
 * ours into what the wire costs, what Express costs, and what the server's own work costs.
 */
async function pageOnly(setup: Setup) {
  const { ours: server, baseline: baselineServer } = await oursAndBaseline(setup);
  const servers: Record<string, RealServer> = {
    ours: server,
    ...(baselineServer ? { baseline: baselineServer } : {}),
  };
  const pagePath = '/kapis/resources.platform.io/v1alpha3/nodes?limit=10&sortBy=name';
  const targets: Record<string, { pid: number; spec: Omit<LoadSpec, 'durationSeconds'> }> = {};
  let bodyFile = '';
  for (const [name, { url, pid }] of Object.entries(servers)) {
    const token = (await login(url, setup.users[0]!)).access;
    const headers = { Authorization: `Bearer ${token}` };
    targets[name] = { pid, spec: { url: `${url}${pagePath}`, headers, connections: CONNECTIONS } };
    if (!bodyFile) {
      bodyFile = path.join(setup.cp.dir, 'page.json');
      writeFileSync(bodyFile, (await httpGet(`${url}${pagePath}`, headers)).body);
    }
  }
  for (const [name, entry] of [
    ['wire', 'bare-server.ts'],
    ['express', 'bare-express.ts'],
  ] as const) {
    const { url, pid } = await startHelper(entry, [bodyFile]);
    targets[name] = { pid, spec: { url: `${url}${pagePath}`, connections: CONNECTIONS } };
  }
  const names = Object.keys(targets);
  const results: Record<string, { rps: number[]; p99: number[]; cpuUs: number[] }> = {};
  for (const name of names) {
    results[name] = { rps: [], p99: [], cpuUs: [] };
    await load({ ...targets[name]!.spec, durationSeconds: WARMUP_S });
  }
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of round % 2 ? names : [...names].reverse()) {
      const { pid, spec } = targets[name]!;
      const before = cpuMs(pid);
      const result = await load({ ...spec, durationSeconds: DURATION_S });
      const cpuUs = ((cpuMs(pid) - before) * 1000) / Math.max(1, result.requests);
      if (result.non2xx + result.errors) throw new Error(`${name}: ${result.non2xx + result.errors} failed`);
      results[name]!.rps.push(result.requestsPerSecond);
      results[name]!.p99.push(result.p99Ms);
      results[name]!.cpuUs.push(cpuUs);
      log(
        `round ${round} ${name}: ${fmt(result.requestsPerSecond)} req/s, p99 ${result.p99Ms} ms, ` +
          `server ${fmt(cpuUs, 1)} CPU µs/request`,
      );
    }
  }
  for (const server of Object.values(servers)) await server.stop();
  const figure = (name: string) => ({
    rps: median(results[name]!.rps),
    p99_ms: median(results[name]!.p99),
    cpu_us_per_request: median(results[name]!.cpuUs),
  });
  const ours = figure('ours');
  const wire = figure('wire');
  const bareExpress = figure('express');
  const baseline = BASELINE ? figure('baseline') : undefined;
  const figures = {
    nodes: NODES,
    rounds: ROUNDS,
    loader: LOADER,
    duration_s: DURATION_S,
    load_cpus: LOAD_CPUS ?? 'any',
    load_average: os.loadavg()[0],
    page_rps: ours.rps,
    page_p99_ms: ours.p99_ms,
    page_cpu_us_per_request: ours.cpu_us_per_request,
    wire_rps: wire.rps,
    wire_cpu_us_per_request: wire.cpu_us_per_request,
    express_rps: bareExpress.rps,
    express_cpu_us_per_request: bareExpress.cpu_us_per_request,
    page_vs_wire: ours.rps / wire.rps,
    page_vs_express: ours.rps / bareExpress.rps,
    express_vs_wire: bareExpress.rps / wire.rps,
    ...(baseline
      ? {
          baseline_page_rps: baseline.rps,
          baseline_page_cpu_us_per_request: baseline.cpu_us_per_request,
          ours_vs_baseline_rps: ours.rps / baseline.rps,
          ours_vs_baseline_cpu: ours.cpu_us_per_request / baseline.cpu_us_per_request,
        }
      : {}),
  };
  const line = (label: string, f: ReturnType<typeof figure>) =>
    `${label} ${fmt(f.rps)} req/s, p99 ${fmt(f.p99_ms)} ms, ${fmt(f.cpu_us_per_request, 1)} CPU µs/request`;
  process.stdout.write(
    [
      `page only: ${fmt(NODES)} nodes, ${ROUNDS} rounds (medians), ${DURATION_S} s per run, ${CONNECTIONS} connections` +
        `${LOAD_CPUS ? `, load generator on CPU ${LOAD_CPUS}` : ''}`,
      line('ours', ours) +
        (baseline
          ? `; baseline (${BASELINE}) ${fmt(baseline.rps)} req/s, ${fmt(baseline.cpu_us_per_request, 1)} CPU µs/request; ` +
            `ours/baseline: req/s ${fmt(ours.rps / baseline.rps, 3)}, CPU per request ${fmt(ours.cpu_us_per_request / baseline.cpu_us_per_request, 3)}`
          : ''),
      line('(d) bare node:http, same bytes:', wire),
      line('(e) bare Express, same bytes and headers:', bareExpress),
      `ours/(d) ${fmt(figures.page_vs_wire, 2)}, ours/(e) ${fmt(figures.page_vs_express, 2)}, (e)/(d) ${fmt(figures.express_vs_wire, 2)}`,
    ].join('\n') + '\n',
  );
  process.stdout.write(JSON.stringify(roundAll(figures)) + '\n');
}

/** CPU time (ms) of a process's libuv pool threads; a thread that has ended counts no more. */
function poolCpuMs(pid: number): number {
  let total = 0;
  for (const tid of threadPoolThreadIds(`/proc/${pid}/task`)) {
    try {
      total += statCpuMs(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      /* the thread has ended */
    }
  }
  return total;
}

/** Busy CPU time (ms) of the whole machine, all cores (/proc/stat: all but idle and iowait). */
function machineBusyMs(): number {
  const ticks = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  return ((total - ticks[3]! - ticks[4]!) * 1000) / 100;
}

/** CPU time (user + system) a process has used so far, in ms; 0 without a pid. */
function cpuMs(pid: number | undefined): number {
  return pid === undefined ? 0 : statCpuMs(`/proc/${pid}/stat`);
}

function roundAll<T extends Record<string, unknown>>(o: T): T {
  return JSON.parse(
    JSON.stringify(o, (_k, v: unknown) => (typeof v === 'number' ? Math.round(v * 1000) / 1000 : v)),
  ) as T;
}

/**
 * One bcrypt comparison at cost 12 on this machine (median of 5): what a login costs a core. Measured at
 * normal priority, then at the priority the server gives its thread pool (http.threadPoolNice, 10): on a
 * machine shared with other busy processes a niced thread gets less than a core, so both are reported.
 */
async function oneCompareMs(): Promise<{ normal: number; niced: number }> {
  const hash = await bcrypt.hash(BENCH_PASSWORD, 12);
  const timeIt = async () => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await bcrypt.compare(BENCH_PASSWORD, hash);
      times.push(performance.now() - t0);
    }
    return median(times);
  };
  const normal = await timeIt();
  // This process's pool threads, as the server's (the hash above started the pool).
  lowerThreadPoolPriority(10);
  return { normal, niced: await timeIt() };
}

/**
 * /healthz and the page, paced (200 req/s each), without and then with 20 clients logging in as fast
 * as they are answered; rounds interleaved, medians. The same page's bytes from a bare node:http server,
 * probed at the same pace in the same runs, are the control: what any server's answers get on this
 * machine while the storm takes its cores. A second bare server probed the same way, the control's twin,
 * says what the instrument reads for two identical servers.
 */
async function loginStorm(
  server: RealServer,
  username: string,
  token: string,
  [etcdPid, apiserverPid]: number[],
  dir: string,
  /** The server the logins go to: `server` unless --storm-replica. */
  logins: RealServer = server,
) {
  const compareMs = await oneCompareMs();
  const pageUrl = `${server.url}/kapis/resources.platform.io/v1alpha3/nodes?limit=10&sortBy=name`;
  const bearer = { Authorization: `Bearer ${token}` };
  const bodyFile = path.join(dir, 'storm-page.json');
  writeFileSync(bodyFile, (await httpGet(pageUrl, bearer)).body);
  const bare = await startHelper('bare-server.ts', [bodyFile]);
  // The instrument's own check: a second bare server, probed as the others are, against the control.
  // Identical servers, so its ratio over the control's is what the instrument reads for no difference at all.
  const twin = await startHelper('bare-server.ts', [bodyFile]);
  // The logins' control: bare bcrypt comparisons, same cost, same threads (bare-pool.ts), stormed by the
  // same clients in each round right after our storm, under the same probes.
  const pool = await startHelper('bare-pool.ts', [BENCH_PASSWORD, '12', String(POOL_NICE)]);
  // Where the cores go during a storm, in cores (CPU seconds per second): the server's pool threads
  // (the comparisons), the rest of the server, the kube-apiserver, etcd, and everything else on the machine
  // (the load generators among it). The pool's share bounds logins/s; the others say what took the rest.
  // `pid`: the server whose pool and rest are counted (ours, or the bare pool in its storm).
  const cpuSnapshot = (pid: number) => ({
    at: performance.now(),
    pool: poolCpuMs(pid),
    server: cpuMs(pid),
    apiserver: cpuMs(apiserverPid),
    etcd: cpuMs(etcdPid),
    machine: machineBusyMs(),
  });
  type Snapshot = ReturnType<typeof cpuSnapshot>;
  const shareOf = (start: Snapshot, end: Snapshot) => (key: Exclude<keyof Snapshot, 'at'>) =>
    (end[key] - start[key]) / (end.at - start.at);
  const cores: Record<'pool' | 'serverOther' | 'apiserver' | 'etcd' | 'rest' | 'idle', number>[] = [];
  // The same for the bare pool's storm: its pool, the rest of it, everything else, idle.
  const poolCores: Record<'pool' | 'serverOther' | 'rest' | 'idle', number>[] = [];
  // Paced evenly and timed in microseconds (paced-probe.ts), in one process of their own.
  const probeSpec = (seconds: number): ProbeSpec => ({
    durationSeconds: seconds,
    targets: [
      // One rate for all: a server probed less often read a higher quiet p99 (its core idle longer between
      // requests) and so a lower ratio, whatever it was.
      { name: 'healthz', url: `${server.url}/healthz`, rate: 200 },
      { name: 'page', url: pageUrl, headers: bearer, rate: 200 },
      { name: 'bare', url: bare.url, rate: 200 },
      { name: 'twin', url: twin.url, rate: 200 },
    ],
  });
  type Probed = Record<'healthz' | 'page' | 'bare' | 'twin', ProbeFigures>;
  const probes = async (seconds: number): Promise<Probed> => {
    const out = JSON.parse(
      await runChild('paced-probe.ts', [JSON.stringify(probeSpec(seconds))]),
    ) as ProbeResult;
    const probed = { healthz: out['healthz']!, page: out['page']!, bare: out['bare']!, twin: out['twin']! };
    const failed = Object.values(probed).reduce((sum, p) => sum + p.failed, 0);
    if (failed > 0) throw new Error(`login storm: ${failed} probe requests failed`);
    return probed;
  };
  const seconds = Math.max(5, DURATION_S);
  const baseline: Probed[] = [];
  const during: Probed[] = [];
  const storms: StormResult[] = [];
  const poolStorms: StormResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    baseline.push(await probes(seconds));
    const spec: StormSpec = {
      url: logins.url,
      username,
      password: BENCH_PASSWORD,
      clients: STORM_CLIENTS,
      durationSeconds: seconds,
    };
    const start = cpuSnapshot(logins.pid);
    const [storm, probed] = await Promise.all([
      runChild('login-storm.ts', [JSON.stringify(spec)]).then((out) => JSON.parse(out) as StormResult),
      probes(seconds),
    ]);
    const share = shareOf(start, cpuSnapshot(logins.pid));
    cores.push({
      pool: share('pool'),
      serverOther: share('server') - share('pool'),
      apiserver: share('apiserver'),
      etcd: share('etcd'),
      rest: share('machine') - share('server') - share('apiserver') - share('etcd'),
      idle: CORES - share('machine'),
    });
    storms.push(storm);
    during.push(probed);
    const poolStart = cpuSnapshot(pool.pid);
    const [poolStorm] = await Promise.all([
      runChild('login-storm.ts', [JSON.stringify({ ...spec, url: pool.url })]).then(
        (out) => JSON.parse(out) as StormResult,
      ),
      probes(seconds),
    ]);
    const poolShare = shareOf(poolStart, cpuSnapshot(pool.pid));
    poolCores.push({
      pool: poolShare('pool'),
      serverOther: poolShare('server') - poolShare('pool'),
      rest: poolShare('machine') - poolShare('server'),
      idle: CORES - poolShare('machine'),
    });
    poolStorms.push(poolStorm);
    log(
      `storm round ${round}: p99 ${(['healthz', 'page', 'bare', 'twin'] as const).map((k) => `${k} ${fmt(baseline.at(-1)![k].p99Ms, 2)} → ${fmt(probed[k].p99Ms, 2)} ms`).join(', ')} (the probe's own send delay p99 ${fmt(probed.page.sendLateP99Ms, 2)} ms), ${storm.succeeded} logins in ${storm.seconds.toFixed(1)} s, ${storm.refused503} refused (p99 ${storm.refusedP99Ms} ms); the bare pool ${poolStorm.succeeded} compares in ${poolStorm.seconds.toFixed(1)} s; ` +
        `cores: ${Object.entries(cores.at(-1)!)
          .map(([k, v]) => `${k} ${fmt(v, 2)}`)
          .join(', ')}; the bare pool's: ${Object.entries(poolCores.at(-1)!)
          .map(([k, v]) => `${k} ${fmt(v, 2)}`)
          .join(', ')}`,
    );
  }
  const medianCores = Object.fromEntries(
    Object.keys(cores[0]!).map((k) => [k, median(cores.map((c) => c[k as keyof (typeof cores)[0]]))]),
  ) as (typeof cores)[0];
  const healthzBaselineP99Ms = median(baseline.map((b) => b.healthz.p99Ms));
  const pageBaselineP99Ms = median(baseline.map((b) => b.page.p99Ms));
  const bareBaselineP99Ms = median(baseline.map((b) => b.bare.p99Ms));
  const healthzP99Ms = median(during.map((d) => d.healthz.p99Ms));
  const pageP99Ms = median(during.map((d) => d.page.p99Ms));
  const bareP99Ms = median(during.map((d) => d.bare.p99Ms));
  const twinBaselineP99Ms = median(baseline.map((b) => b.twin.p99Ms));
  const twinP99Ms = median(during.map((d) => d.twin.p99Ms));
  process.kill(bare.pid, 'SIGTERM');
  process.kill(twin.pid, 'SIGTERM');
  process.kill(pool.pid, 'SIGTERM');
  const loginsPerSecond = median(storms.map((s) => s.succeeded / s.seconds));
  const poolComparesPerSecond = median(poolStorms.map((s) => s.succeeded / s.seconds));
  return {
    compareMs,
    healthzBaselineP99Ms,
    pageBaselineP99Ms,
    healthzP99Ms,
    pageP99Ms,
    healthzP99Ratio: healthzP99Ms / healthzBaselineP99Ms,
    pageP99Ratio: pageP99Ms / pageBaselineP99Ms,
    bareBaselineP99Ms,
    bareP99Ms,
    bareP99Ratio: bareP99Ms / bareBaselineP99Ms,
    twinBaselineP99Ms,
    twinP99Ms,
    twinP99Ratio: twinP99Ms / twinBaselineP99Ms,
    loginsPerSecond,
    poolComparesPerSecond,
    loginsVsPool: median(
      storms.map((s, i) => s.succeeded / s.seconds / (poolStorms[i]!.succeeded / poolStorms[i]!.seconds)),
    ),
    loginsRatio: loginsPerSecond / (CORES / (compareMs.normal / 1000)),
    loginsRatioNiced: loginsPerSecond / (CORES / (compareMs.niced / 1000)),
    cores: medianCores,
    // Logins/s against what the CPU the pool actually got allows: 1 means no pool time was wasted.
    loginsPerPoolCpuRatio: loginsPerSecond / (medianCores.pool / (compareMs.niced / 1000)),
    refused: storms.reduce((s, r) => s + r.refused503, 0),
    refusedP99Ms: median(storms.map((s) => s.refusedP99Ms)),
  };
}

/**
 * Access log bytes per request at each setting, under a mix of 90% page reads, 5% probes and 5% 404s
 * (one server per setting), as MB per minute at 1,000 req/s.
 */
async function logVolumes(setup: Setup, token: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const base = '/kapis/resources.platform.io/v1alpha3/nodes';
  const paths = [
    ...Array.from({ length: 18 }, () => `${base}?limit=10&sortBy=name`),
    '/healthz',
    `${base}/bench-no-such-node`,
  ];
  for (const mode of ['all', 'sampled', 'exceptions']) {
    const server = await startRealServer({
      args: [...setup.serverArgs, `--log.access.mode=${mode}`],
      dir: setup.cp.dir,
      name: `log-${mode}`,
    });
    await load({
      url: server.url + paths[0],
      headers: { Authorization: `Bearer ${token}` },
      paths,
      connections: CONNECTIONS,
      durationSeconds: WARMUP_S,
    });
    const before = server.logBytes();
    const result = await load({
      url: server.url + paths[0],
      headers: { Authorization: `Bearer ${token}` },
      paths,
      connections: CONNECTIONS,
      durationSeconds: DURATION_S,
    });
    await server.stop(); // flushes the buffered lines
    const bytesPerRequest = (server.logBytes() - before) / result.requests;
    out[mode] = (bytesPerRequest * 1000 * 60) / 1e6;
    log(
      `access log ${mode}: ${fmt(bytesPerRequest, 1)} bytes/request → ${fmt(out[mode], 2)} MB/min at 1,000 req/s; mix at ${fmt(result.requestsPerSecond)} req/s`,
    );
  }
  return out;
}

/** How cost grows with the node count: one server, ready time, memory, the page, the full list. */
async function scale(setup: Setup) {
  const server = await startRealServer({ args: setup.serverArgs, dir: setup.cp.dir, name: 'scale' });
  const ready = server.memory();
  const heap = await server.heap();
  const one = (await login(server.url, setup.users[0]!)).access;
  const bearer = { Authorization: `Bearer ${one}` };
  const nodesUrl = `${server.url}/kapis/resources.platform.io/v1alpha3/nodes`;
  const pages: LoadResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    pages.push(
      await measure('(a) page', {
        url: `${nodesUrl}?limit=10&sortBy=name`,
        headers: bearer,
        connections: CONNECTIONS,
      }),
    );
  }
  const fullBytes = (await httpGet(nodesUrl, bearer)).body.length;
  const full = await measure('(c) full list', { url: nodesUrl, headers: bearer, connections: 2 });
  const afterLoad = server.memory();
  await server.stop();
  const m = (pick: (r: LoadResult) => number) => median(pages.map(pick));
  const figures = {
    nodes: NODES,
    seed_s: setup.seedSeconds,
    ready_s: server.readySeconds,
    memory_limit: server.memoryLimit,
    oom_kills: server.oomKills(),
    rss_ready_mb: ready.rssMb,
    heap_ready: heap,
    page_rps: m((r) => r.requestsPerSecond),
    page_p50_ms: m((r) => r.p50Ms),
    page_p99_ms: m((r) => r.p99Ms),
    full_mb: fullBytes / 1e6,
    full_rps: full.requestsPerSecond,
    rss_after_load_mb: afterLoad.rssMb,
    rss_peak_mb: afterLoad.peakRssMb,
  };
  process.stdout.write(
    `scale: ${fmt(NODES)} nodes; ready ${fmt(server.readySeconds, 1)} s; RSS ${fmt(ready.rssMb)} MB ready (V8 heap used ${fmt(heap.heapUsedMb)} MB, external ${fmt(heap.externalMb)} MB), ${fmt(afterLoad.rssMb)} MB after load, peak ${fmt(afterLoad.peakRssMb)} MB; page ${fmt(figures.page_rps)} req/s, p50 ${figures.page_p50_ms} ms, p99 ${figures.page_p99_ms} ms; full list ${fmt(figures.full_mb, 1)} MB at ${fmt(full.requestsPerSecond)} req/s\n`,
  );
  process.stdout.write(JSON.stringify(roundAll(figures)) + '\n');
}

/**
 * The soak: pages, full lists with and without gzip, logins, refreshes and proxy requests at once, for
 * SOAK_S seconds; RSS every 10 s. Growth is measured from the end of the first fifth (warm-up).
 */
async function soak(setup: Setup) {
  const server = await startRealServer({ args: setup.serverArgs, dir: setup.cp.dir, name: 'soak' });
  log(
    `soak: server ready in ${server.readySeconds.toFixed(1)} s, RSS ${fmt(server.memory().rssMb)} MB, memory limit ${server.memoryLimit}; ${SOAK_S} s`,
  );
  const one = (await login(server.url, setup.users[0]!)).access;
  const bearer = { Authorization: `Bearer ${one}` };
  const nodesUrl = `${server.url}/kapis/resources.platform.io/v1alpha3/nodes`;
  const samples: { t: number; rssMb: number }[] = [];
  const startedAt = Date.now();
  const timer = setInterval(() => {
    const sample = { t: (Date.now() - startedAt) / 1000, rssMb: server.memory().rssMb };
    samples.push(sample);
    if (samples.length % 6 === 0) log(`soak t=${sample.t.toFixed(0)} s: RSS ${fmt(sample.rssMb)} MB`);
  }, 10_000);
  let refreshes = 0;
  const refresher = (async () => {
    let pair = await login(server.url, setup.users[1]!);
    while (Date.now() - startedAt < SOAK_S * 1000) {
      pair = await refresh(server.url, pair.refresh);
      refreshes++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const stormSpec: StormSpec = {
    url: server.url,
    username: setup.stormUser,
    password: BENCH_PASSWORD,
    clients: 4,
    durationSeconds: SOAK_S,
  };
  const [pages, full, fullGzip, proxy, logins] = await Promise.all([
    load({
      url: `${nodesUrl}?limit=10&sortBy=name`,
      headers: bearer,
      connections: 4,
      overallRate: 500,
      durationSeconds: SOAK_S,
    }),
    load({ url: nodesUrl, headers: bearer, connections: 1, overallRate: 2, durationSeconds: SOAK_S }),
    load({
      url: nodesUrl,
      headers: { ...bearer, 'Accept-Encoding': 'gzip' },
      connections: 1,
      overallRate: 2,
      durationSeconds: SOAK_S,
    }),
    load({
      url: `${server.url}/api/v1/nodes?limit=10`,
      headers: bearer,
      connections: 2,
      overallRate: 50,
      durationSeconds: SOAK_S,
    }),
    runChild('login-storm.ts', [JSON.stringify(stormSpec)]).then((out) => JSON.parse(out) as StormResult),
  ]);
  await refresher;
  clearInterval(timer);
  const peak = server.memory().peakRssMb;
  // The sessions the logins left: each holds memory in every replica until it expires or is ended.
  const exposition = await (await fetch(`${server.url}/metrics`)).text();
  const sessionsHeld = Number(/^platform_auth_sessions_active (\S+)$/m.exec(exposition)?.[1] ?? NaN);
  const sessionsEndedForLimit = sampleSum(exposition, 'platform_auth_sessions_ended_total', {
    reason: 'session_limit',
  });
  await server.stop();
  const warm = samples.filter((s) => s.t >= SOAK_S / 5);
  const warmStart = warm[0]?.rssMb ?? NaN;
  const end = samples.at(-1)?.rssMb ?? NaN;
  const maxAfterWarm = Math.max(...warm.map((s) => s.rssMb));
  const figures = {
    soak_s: SOAK_S,
    nodes: NODES,
    malloc_arena_max: process.env['MALLOC_ARENA_MAX'] ?? '2 (image default)',
    memory_limit: server.memoryLimit,
    oom_kills: server.oomKills(),
    rss_warm_mb: warmStart,
    rss_end_mb: end,
    rss_max_after_warm_mb: maxAfterWarm,
    rss_peak_mb: peak,
    growth_after_warm_pct: ((end - warmStart) / warmStart) * 100,
    pages: pages.requests,
    full_lists: full.requests + fullGzip.requests,
    proxy_requests: proxy.requests,
    logins: logins.succeeded,
    refreshes,
    sessions_held_at_end: sessionsHeld,
    sessions_ended_for_limit: sessionsEndedForLimit,
  };
  process.stdout.write(
    [
      `soak: ${SOAK_S} s, ${fmt(NODES)} nodes; ${pages.requests} pages, ${figures.full_lists} full lists (half gzip), ${proxy.requests} proxied, ${logins.succeeded} logins, ${refreshes} refreshes`,
      `RSS every 10 s (MB): ${samples.map((s) => fmt(s.rssMb)).join(' ')}`,
      `RSS after warm-up ${fmt(warmStart)} MB, at the end ${fmt(end)} MB (${fmt(figures.growth_after_warm_pct, 1)}%), highest ${fmt(maxAfterWarm)} MB, peak (VmHWM) ${fmt(peak)} MB`,
      `sessions held at the end ${fmt(sessionsHeld)}; ended for the per-user limit ${fmt(sessionsEndedForLimit)}`,
    ].join('\n') + '\n',
  );
  process.stdout.write(JSON.stringify(roundAll(figures)) + '\n');
}

await main();
