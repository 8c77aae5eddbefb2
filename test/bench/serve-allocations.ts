// The node API for the pod-cache benchmark, in its own process (run with --expose-gc): with or without
// the pod watch behind the allocation annotations. Once synced, and again on every SIGUSR2, it runs a
// full GC and prints one JSON line of memory figures on stderr (`MemoryReport`); the first also has
// {url, nodesUrl, pid, pods, syncSeconds}.
// Usage: node --expose-gc test/bench/serve-allocations.ts <kubeconfig> with|without
import { readFileSync } from 'node:fs';
import { memoryReleasingCollection } from '../../src/http/start-up-memory.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startNodesServer } from '../support/nodes-server.ts';

export interface MemoryReport {
  rssMb: number;
  /** The highest RSS so far (VmHWM): the transient peak of the first sync. */
  peakRssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** Memory outside the V8 heap held by JS objects (Buffers among it). */
  externalMb: number;
}

function memoryReport(): MemoryReport {
  // Settle: a full collection, twice (the first finalises, the second frees), so what remains is live.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const memory = process.memoryUsage();
  const status = readFileSync('/proc/self/status', 'utf8');
  const peakKb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  const mb = (bytes: number) => bytes / 2 ** 20;
  return {
    rssMb: mb(memory.rss),
    peakRssMb: peakKb / 1024,
    heapUsedMb: mb(memory.heapUsed),
    heapTotalMb: mb(memory.heapTotal),
    externalMb: mb(memory.external),
  };
}

const withPods = process.argv[3] === 'with';
const started = Date.now();
const server = await startNodesServer({
  kubeconfigPath: process.argv[2]!,
  logger: createLogger({ level: 'warn' }),
  withPods,
});
await server.cache.waitForSynced(600_000);
const syncSeconds = (Date.now() - started) / 1000;
// As src/main.ts does once its caches have synced (releaseStartUpMemory); BENCH_NO_RELEASE=1 leaves it out.
if (!process.env['BENCH_NO_RELEASE']) memoryReleasingCollection()?.();
process.stderr.write(
  JSON.stringify({
    url: server.url,
    nodesUrl: server.nodesUrl,
    pid: process.pid,
    pods: withPods ? server.pods.size : 0,
    syncSeconds,
    ...memoryReport(),
  }) + '\n',
);
process.on('SIGUSR2', () => process.stderr.write(JSON.stringify(memoryReport()) + '\n'));
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
