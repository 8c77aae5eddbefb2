// The real server (src/main.ts, the composition operators run) as a benchmark subject: its own process,
// its log output going to a file (as a container runtime would take it, and so the benchmark can measure
// its volume), its memory read from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chartMemoryLimitMb, underMemoryLimit } from './memory-cgroup.ts';

const MAIN_TS = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/**
 * The environment of the image (deploy/Dockerfile), unless the benchmark's own environment says otherwise:
 * glibc arenas capped and large blocks always mapped on their own (without them every thread that
 * allocates — libuv's pool running bcrypt and gzip — gets its own 64 MB arena, and freed memory stays
 * there), and V8's semi-spaces at 8 MB (under a 512 Mi limit Node would pick 1 MB).
 */
export const IMAGE_ENV = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  NODE_ENV: 'production',
  NODE_OPTIONS: '--max-semi-space-size=8',
};

/**
 * Extra node flags for the server under test, e.g. BENCH_NODE_FLAGS=--max-semi-space-size=16 to try a
 * V8 setting before the image adopts it (given after the image's NODE_OPTIONS, so they win).
 */
export const BENCH_NODE_FLAGS = (process.env['BENCH_NODE_FLAGS'] ?? '').split(' ').filter(Boolean);

/**
 * The memory limit the server under test runs with, as a Pod of the chart would (memory-cgroup.ts):
 * BENCH_MEMORY_LIMIT_MB, else the chart's `resources.limits.memory`; 0 runs it without one.
 */
export function benchMemoryLimitMb(): number {
  const fromEnv = process.env['BENCH_MEMORY_LIMIT_MB'];
  return fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) : chartMemoryLimitMb();
}

export interface RealServer {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Seconds from spawn to /readyz answering 200 (caches synced). */
  readySeconds: number;
  /** The memory limit it runs under, e.g. "512 MiB (cgroup v1)", or why none. */
  memoryLimit: string;
  /** After it exited: how many processes the OOM killer ended in its cgroup. */
  oomKills(): number;
  logFile: string;
  /** Bytes the server has written to its log so far. */
  logBytes(): number;
  memory(): { rssMb: number; peakRssMb: number };
  /** Where the memory is, from the server's own /metrics: V8 heap (total, used), external (Buffers), RSS. */
  heap(): Promise<HeapFigures>;
  /** SIGTERM; resolves with the exit code once the process is gone. */
  stop(): Promise<number | null>;
}

/**
 * The servers still running, killed when the benchmark exits: one 'exit' listener for all of them (the
 * spread part runs ten at once, and a listener each made Node warn of a leak).
 */
const liveServers = new Set<ChildProcess>();
function killedOnExit(child: ChildProcess): void {
  if (!process.listeners('exit').includes(killLiveServers)) process.on('exit', killLiveServers);
  liveServers.add(child);
}
function killLiveServers(): void {
  for (const child of liveServers) child.kill('SIGKILL');
}

export async function startRealServer(options: {
  args: string[];
  dir: string;
  name: string;
  env?: Record<string, string>;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeFlags?: string[];
  /** Another checkout's src/main.ts (a baseline to compare with); this checkout's by default. */
  main?: string;
  readyTimeoutMs?: number;
  /** Memory limit in MiB (a cgroup, as a Pod's); benchMemoryLimitMb() by default, 0: none. */
  memoryLimitMb?: number;
}): Promise<RealServer> {
  const logFile = path.join(options.dir, `${options.name}.log`);
  const fd = openSync(logFile, 'w');
  const argv = [
    process.execPath,
    ...BENCH_NODE_FLAGS,
    ...(options.nodeFlags ?? []),
    options.main ?? MAIN_TS,
    '--http.host=127.0.0.1',
    '--http.port=0',
    ...options.args,
  ];
  const command = underMemoryLimit(
    `platform-bench-${process.pid}-${options.name}`,
    options.memoryLimitMb ?? benchMemoryLimitMb(),
    argv,
  );
  const startedAt = performance.now();
  const child = spawn(command.command, command.args, {
    env: { ...IMAGE_ENV, ...process.env, ...options.env },
    stdio: ['ignore', fd, 'inherit'],
  });
  closeSync(fd);
  // Never outlive the benchmark, whatever way it ends.
  killedOnExit(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  let oomKills = 0;
  void exited.then(() => {
    gone = true;
    liveServers.delete(child);
    oomKills = command.release();
  });
  const deadline = Date.now() + (options.readyTimeoutMs ?? 600_000);
  let url: string | undefined;
  for (;;) {
    if (gone) throw new Error(`server exited before it was ready; see ${logFile}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server not ready in time; see ${logFile}`);
    }
    url ??= listeningUrl(logFile);
    if (url) {
      const ready = await fetch(`${url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const readySeconds = (performance.now() - startedAt) / 1000;
  // The login thread starts after readiness (auth.loginThread); what is measured is the server as it runs
  // from then on, with logins on their thread. A server without one has no such gauge.
  for (;;) {
    if (gone) throw new Error(`server exited before its login thread was ready; see ${logFile}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`login thread not ready in time; see ${logFile}`);
    }
    const metrics = await fetch(`${url}/metrics`).then(
      (r) => r.text(),
      () => '',
    );
    if (metrics && !/^platform_login_thread_ready 0$/m.test(metrics)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pid = child.pid!;
  return {
    url,
    pid,
    child,
    readySeconds,
    logFile,
    memoryLimit: command.memoryLimit,
    oomKills: () => oomKills,
    logBytes: () => statSync(logFile).size,
    memory: () => memoryOf(pid),
    heap: () => heapOf(url),
    async stop() {
      if (!gone) child.kill('SIGTERM');
      return exited;
    },
  };
}

function listeningUrl(logFile: string): string | undefined {
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"listening"')) continue;
    try {
      const entry = JSON.parse(line) as { message?: string; url?: string };
      if (entry.message === 'listening' && entry.url) return entry.url;
    } catch {
      /* a partial line */
    }
  }
  return undefined;
}

export function memoryOf(pid: number): { rssMb: number; peakRssMb: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
  } catch {
    return { rssMb: NaN, peakRssMb: NaN };
  }
}

export interface HeapFigures {
  heapTotalMb: number;
  heapUsedMb: number;
  externalMb: number;
  /** V8's young generation (new space), part of heapTotalMb: it grows under allocation pressure. */
  newSpaceMb: number;
  /** RSS minus V8 heap minus external: native memory (malloc arenas, code, stacks, socket buffers). */
  otherMb: number;
}

async function heapOf(url: string): Promise<HeapFigures> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) =>
    Number(new RegExp(`^${name} ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? NaN) / 1024 / 1024;
  const heapTotalMb = value('nodejs_heap_size_total_bytes');
  const externalMb = value('nodejs_external_memory_bytes');
  return {
    heapTotalMb,
    heapUsedMb: value('nodejs_heap_size_used_bytes'),
    externalMb,
    newSpaceMb:
      Number(/^nodejs_heap_space_size_total_bytes\{space="new"\} ([0-9.e+]+)$/m.exec(text)?.[1] ?? NaN) /
      1024 /
      1024,
    otherMb: value('process_resident_memory_bytes') - heapTotalMb - externalMb,
  };
}
