import { readFileSync } from 'node:fs';
import { loadConfig, ConfigError, type Config } from './config/config.ts';
import { AccessReviewer, subjectAccessReview } from './authz/access-review.ts';
import { createCacheMetrics } from './cluster/cache-metrics.ts';
import { loadKubeConfig } from './cluster/kube-config.ts';
import { instrumentKubeConfig } from './cluster/kube-client-metrics.ts';
import { FirstContact } from './cluster/first-contact.ts';
import { createApp } from './http/app.ts';
import { healthRoutes } from './http/health-routes.ts';
import { metricsRoutes } from './http/metrics-routes.ts';
import { openApiRoutes } from './http/openapi-routes.ts';
import { Readiness } from './http/readiness.ts';
import { startServer, type RunningServer } from './http/server.ts';
import { exitGracefullyOnSignals } from './http/shutdown-signals.ts';
import { configuredLogStore } from './logging/configured-store.ts';
import { logRoutes } from './logging/log-routes.ts';
import { createLoggingMetrics } from './logging/logging-metrics.ts';
import { removedLoggingRoutes } from './logging/removed-routes.ts';
import { createHttpMetrics } from './observability/http-metrics.ts';
import { createLogger, createRequestContextStore } from './observability/logger.ts';
import { createMetricsRegistry } from './observability/metrics.ts';
import { upstreamRequestDuration } from './observability/upstream-metrics.ts';
import { openApiDocument } from './openapi/document.ts';
import { healthApi } from './openapi/health-api.ts';
import { logsApi } from './openapi/logs-api.ts';
import { nodesApi } from './openapi/nodes-api.ts';
import { observabilityApi } from './openapi/observability-api.ts';
import { NodeCache } from './resources/node-cache.ts';
import { nodesRoutes } from './resources/nodes-routes.ts';
import { packageVersion } from './version.ts';

/** Composes the server from its configuration. The only place that wires modules together. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<RunningServer> {
  let config: Config;
  try {
    config = loadConfig({ argv, env, readFile: (p) => readFileSync(p, 'utf8') });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`platform-apiserver: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  const requestContext = createRequestContextStore();
  const logger = createLogger({ level: config.log.level, context: requestContext });
  let kc;
  let logging;
  const registry = createMetricsRegistry();
  const loggingMetrics = createLoggingMetrics(registry);
  try {
    kc = loadKubeConfig(config.kubernetes, env);
    logging = configuredLogStore(config.logging, {
      metrics: loggingMetrics,
      readFile: (p) => readFileSync(p, 'utf8'),
    });
  } catch (err) {
    if (err instanceof ConfigError) {
      logger.error(err.message, { key: err.key });
      process.stderr.write(`platform-apiserver: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  // Before any client is made from kc: every request to the kube-apiserver is then measured.
  instrumentKubeConfig(kc, upstreamRequestDuration(registry));

  const readiness = new Readiness();
  const firstContact = new FirstContact(kc, logger);
  readiness.register('kube-apiserver', () => firstContact.reached);
  firstContact.start();

  const cacheMetrics = createCacheMetrics(registry);
  const nodeCache = new NodeCache({ kubeConfig: kc, logger, metrics: cacheMetrics });
  readiness.register('nodes-cache', () => nodeCache.synced);
  nodeCache.start();
  const accessReviewer = new AccessReviewer({
    review: subjectAccessReview(kc, config.authz.reviewTimeoutSeconds * 1000),
    allowedTtlMs: config.authz.allowedTtlSeconds * 1000,
    deniedTtlMs: config.authz.deniedTtlSeconds * 1000,
    staleIfErrorMs: config.authz.staleIfErrorSeconds * 1000,
    maxEntries: config.authz.cacheEntries,
    registry,
    logger,
  });

  const version = packageVersion();
  // One entry per mounted route group: the document describes exactly what is wired below.
  const apiContext = { platformName: config.platformName, version };
  const apiDocument = openApiDocument(apiContext, [
    healthApi(),
    observabilityApi(),
    nodesApi(apiContext),
    logsApi(apiContext),
  ]);

  const app = createApp({
    logger,
    requestContext,
    httpMetrics: createHttpMetrics(registry),
    publicRoutes: [
      healthRoutes(readiness, {
        platform: config.platformName,
        version,
        node: process.version,
      }),
      metricsRoutes(registry),
      openApiRoutes(apiDocument),
    ],
    protectedRoutes: [
      nodesRoutes({
        platformName: config.platformName,
        nodes: nodeCache,
        authorizer: accessReviewer,
        registry,
        gzipMinBytes: config.resources.gzipMinBytes,
        memoMaxBytes: config.resources.responseMemoMegabytes * 1024 * 1024,
      }),
      logRoutes({
        platformName: config.platformName,
        logging,
        check: (identity, attributes) => accessReviewer.check(identity, attributes),
        logger,
        metrics: loggingMetrics,
      }),
      removedLoggingRoutes(config.platformName),
    ],
    trustedProxies: config.http.trustedProxies,
  });
  const running = await startServer(app, {
    host: config.http.host,
    port: config.http.port,
    requestTimeoutSeconds: config.http.requestTimeoutSeconds,
    readiness,
    logger,
  });
  logger.info('listening', {
    url: running.url,
    platform: config.platformName,
    kubernetes: kc.getCurrentCluster()?.server,
    logStore: logging ? config.logging.hosts : 'not configured',
  });

  exitGracefullyOnSignals(running, {
    graceMs: config.http.shutdownGraceSeconds * 1000,
    logger,
    beforeDrain: () => {
      firstContact.stop();
      void nodeCache.stop();
    },
  });
  return running;
}

if (import.meta.main) {
  await main(process.argv.slice(2), process.env);
}
