// The node API for the pod-cache benchmark, in its own process (run with --expose-gc): with or without
// the pod watch behind the allocation annotations. Prints, once synced and after a full GC, one JSON
// line on stderr: {url, nodesUrl, pid, rssMb, heapUsedMb, pods, syncSeconds}.
// Usage: node --expose-gc test/bench/serve-allocations.ts <kubeconfig> with|without
import { createLogger } from '../../src/observability/logger.ts';
import { startNodesServer } from '../support/nodes-server.ts';

const withPods = process.argv[3] === 'with';
const started = Date.now();
const server = await startNodesServer({
  kubeconfigPath: process.argv[2]!,
  logger: createLogger({ level: 'warn' }),
  withPods,
});
await server.cache.waitForSynced(600_000);
const syncSeconds = (Date.now() - started) / 1000;
// Settle: a full collection, twice (the first finalises, the second frees), so what remains is the cache.
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
gc?.();
const memory = process.memoryUsage();
process.stderr.write(
  JSON.stringify({
    url: server.url,
    nodesUrl: server.nodesUrl,
    pid: process.pid,
    rssMb: memory.rss / 2 ** 20,
    heapUsedMb: memory.heapUsed / 2 ** 20,
    pods: withPods ? server.pods.size : 0,
    syncSeconds,
  }) + '\n',
);
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
