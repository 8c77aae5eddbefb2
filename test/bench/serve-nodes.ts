// The node API as the benchmark's server under test, in its own process: the same composition as
// src/main.ts (node cache, SubjectAccessReview authorizer, routes, per-request JSON access log at info),
// with bearer authentication by the kube-apiserver's static tokens.
// Usage: node test/bench/serve-nodes.ts <kubeconfig>; prints {url, pid} as JSON once synced.
import { createLogger } from '../../src/observability/logger.ts';
import { startNodesServer } from '../support/nodes-server.ts';

const server = await startNodesServer({
  kubeconfigPath: process.argv[2]!,
  logger: createLogger({ level: 'info' }),
});
await server.cache.waitForSynced(300_000);
process.stderr.write(JSON.stringify({ url: server.url, nodesUrl: server.nodesUrl, pid: process.pid }) + '\n');
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
