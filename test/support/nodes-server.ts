import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { AccessReviewer, subjectAccessReview } from '../../src/access/access-review.ts';
import { createCacheMetrics } from '../../src/cluster/cache-metrics.ts';
import { createApp } from '../../src/http/app.ts';
import { healthRoutes } from '../../src/health/health-routes.ts';
import { Readiness } from '../../src/kernel/readiness.ts';
import { startServer } from '../../src/http/server.ts';
import { createLogger, createRequestContextStore, type Logger } from '../../src/observability/logger.ts';
import { NodeCache } from '../../src/nodes/node-cache.ts';
import { nodesRoutes, resourcesApiPath } from '../../src/nodes/nodes-routes.ts';
import { PodCache } from '../../src/nodes/pod-cache.ts';
import { kubeTokenAuthenticator } from './kube-token-authenticator.ts';

export interface NodesServer {
  url: string;
  /** URL of the node list, e.g. http://127.0.0.1:1234/kapis/resources.platform.io/v1alpha3/nodes */
  nodesUrl: string;
  cache: NodeCache;
  pods: PodCache;
  registry: Registry;
  stop(): Promise<void>;
}

export interface NodesServerOptions {
  kubeconfigPath: string;
  /** Talk to the kube-apiserver at this address instead of the kubeconfig's (e.g. through a proxy). */
  server?: string;
  platformName?: string;
  allowedTtlMs?: number;
  deniedTtlMs?: number;
  staleIfErrorMs?: number;
  reviewTimeoutMs?: number;
  gzipMinBytes?: number;
  /** Defaults to a silent one (or debug on stderr with NODES_TEST_LOG=1). */
  logger?: Logger;
}

/** A KubeConfig from a file, current context admin (the server's own identity), optionally re-pointed. */
export function serverKubeConfig(kubeconfigPath: string, server?: string): KubeConfig {
  const kc = new KubeConfig();
  let text = readFileSync(kubeconfigPath, 'utf8');
  if (server) text = text.replace(/server: .*/, `server: ${server}`);
  kc.loadFromString(text);
  kc.setCurrentContext('admin');
  return kc;
}

/**
 * The node API assembled as src/main.ts assembles it (real cache, real SubjectAccessReviews), with
 * bearer authentication by the kube-apiserver's static tokens.
 */
export async function startNodesServer(options: NodesServerOptions): Promise<NodesServer> {
  const kc = serverKubeConfig(options.kubeconfigPath, options.server);
  const logger =
    options.logger ??
    (process.env['NODES_TEST_LOG']
      ? createLogger({ level: 'debug', stream: process.stderr })
      : createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) }));
  const registry = new Registry();
  const readiness = new Readiness();
  const platformName = options.platformName ?? 'platform';
  const cacheMetrics = createCacheMetrics(registry);
  const pods = new PodCache({
    kubeConfig: kc,
    logger,
    metrics: cacheMetrics,
    initialBackoffMs: 100,
    maxBackoffMs: 1000,
  });
  const cache = new NodeCache({
    kubeConfig: kc,
    logger,
    metrics: cacheMetrics,
    platformName,
    allocations: pods,
    initialBackoffMs: 100,
    maxBackoffMs: 1000,
  });
  readiness.register('nodes-cache', () => cache.synced);
  const authorizer = new AccessReviewer({
    review: subjectAccessReview(kc, options.reviewTimeoutMs ?? 5000),
    allowedTtlMs: options.allowedTtlMs ?? 10_000,
    deniedTtlMs: options.deniedTtlMs ?? 500,
    staleIfErrorMs: options.staleIfErrorMs ?? 300_000,
    maxEntries: 1000,
    registry,
    logger,
  });
  readiness.register('authz-reviews', () => authorizer.readiness());
  const app = createApp({
    logger,
    requestContext: createRequestContextStore(),
    publicRoutes: [healthRoutes(readiness)],
    // Stands in for the platform's own tokens, which need no apiserver: it bypasses any redirection.
    authenticate: kubeTokenAuthenticator(serverKubeConfig(options.kubeconfigPath)),
    protectedRoutes: [
      nodesRoutes({
        platformName,
        nodes: cache,
        authorizer,
        registry,
        gzipMinBytes: options.gzipMinBytes ?? 8192,
        memoMaxBytes: 16 * 1024 * 1024,
      }),
    ],
  });
  const running = await startServer(app, {
    host: '127.0.0.1',
    port: 0,
    requestTimeoutSeconds: 30,
    readiness,
    logger,
  });
  pods.start();
  cache.start();
  return {
    url: running.url,
    nodesUrl: `${running.url}${resourcesApiPath(platformName)}/nodes`,
    cache,
    pods,
    registry,
    stop: async () => {
      await cache.stop();
      await pods.stop();
      await running.shutdown(1000);
    },
  };
}
