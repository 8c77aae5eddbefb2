import { readFileSync } from 'node:fs';
import { accessModule } from './access/access-module.ts';
import { versionModule } from './build-info/version-module.ts';
import { createCacheMetrics } from './cluster/cache-metrics.ts';
import { connectKubeConfig } from './cluster/kube-connection.ts';
import { ConfigError, loadConfig } from './config/config.ts';
import { healthModule } from './health/health-module.ts';
import { iamModule } from './iam/iam-module.ts';
import {
  cacheMetricsRef,
  configRef,
  kubeConfigRef,
  loggerRef,
  metricsExportRef,
  processEnvRef,
  readinessRef,
  startUpReleasedRef,
  registryRef,
} from './host-services.ts';
import { createApp } from './http/app.ts';
import { bearerDoorRef, type FeatureModule, type HttpEdge } from './http/feature-module.ts';
import { openApiDocument } from './http/openapi-document.ts';
import { methodNotAllowed } from './http/method-not-allowed.ts';
import { openApiRoutes } from './http/openapi-routes.ts';
import { startServer, type RunningServer } from './http/server.ts';
import { memoryReleasingCollection, releaseStartUpMemory } from './kernel/start-up-memory.ts';
import { exitGracefullyOnSignals } from './http/shutdown-signals.ts';
import { niceThreadPool } from './http/thread-pool-priority.ts';
import { loadTlsMaterial } from './http/tls-files.ts';
import { accessLogPolicy } from './observability/access-log-policy.ts';
import { bufferedStdout } from './observability/buffered-output.ts';
import { createHttpMetrics } from './observability/http-metrics.ts';
import { Lifecycle } from './kernel/lifecycle.ts';
import { kubeProxyModule } from './kube-proxy/kube-proxy-module.ts';
import { logQueryModule } from './log-query/log-query-module.ts';
import { monitoringModule } from './monitoring/monitoring-module.ts';
import { nodesModule } from './nodes/nodes-module.ts';
import { resourcesModule } from './resources/resources-module.ts';
import { createLogger, createRequestContextStore } from './observability/logger.ts';
import { logProcessWarnings } from './observability/process-warnings.ts';
import { createMetricsRegistry } from './observability/metrics.ts';
import { MetricsExport } from './observability/metrics-export.ts';
import { platformConfigModule } from './platform-config/platform-config-module.ts';
import { reconcileModule } from './reconcile/reconcile-module.ts';
import { tenantModule } from './tenant/tenant-module.ts';
import { tokensModule } from './tokens/tokens-module.ts';
import { usersModule } from './users/users-module.ts';
import { packageVersion } from './version.ts';

/** The features this server is made of. Adding one is a folder and a line here. */
export const MODULES: readonly FeatureModule[] = [
  healthModule,
  versionModule,
  platformConfigModule,
  usersModule,
  tokensModule,
  accessModule,
  iamModule,
  nodesModule,
  resourcesModule,
  reconcileModule,
  tenantModule,
  monitoringModule,
  logQueryModule,
  kubeProxyModule,
];

/** Composes the server from its configuration and modules, and runs them until a signal stops it. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<RunningServer> {
  const config = loadConfig({ argv, env, readFile: (p) => readFileSync(p, 'utf8') });
  const { http } = config;
  // Fail fast: an unreadable or mismatched certificate pair names its key before any cluster work.
  const tls = http.tlsCertFile ? { certFile: http.tlsCertFile, keyFile: http.tlsKeyFile } : undefined;
  if (tls) loadTlsMaterial(tls);

  const requestContext = createRequestContextStore();
  const logger = createLogger({ level: config.log.level, context: requestContext, stream: bufferedStdout() });
  logProcessWarnings(logger);
  const registry = createMetricsRegistry();
  const kubeConfig = connectKubeConfig(config.kubernetes, env, { registry, logger });

  const lifecycle = new Lifecycle<HttpEdge>(logger);
  const startUpReleased = Promise.withResolvers<void>();
  lifecycle
    .provide(configRef, config)
    .provide(loggerRef, logger)
    .provide(registryRef, registry)
    .provide(metricsExportRef, new MetricsExport(registry))
    .provide(processEnvRef, env)
    .provide(kubeConfigRef, kubeConfig)
    .provide(cacheMetricsRef, createCacheMetrics(registry))
    .provide(readinessRef, lifecycle.readiness)
    .provide(startUpReleasedRef, startUpReleased.promise);
  const edges = await lifecycle.register(MODULES);
  // Registering has started libuv's pool (the password verifier's start-up hash): now it can be niced.
  niceThreadPool(http.threadPoolNice, logger);
  await lifecycle.start();
  const stopWaitingToRelease = releaseStartUpMemory({
    isReady: () => lifecycle.readiness.report().ready,
    collect: memoryReleasingCollection(),
    logger,
    onReleased: startUpReleased.resolve,
  });

  // The document describes exactly the route groups mounted below.
  const document = openApiDocument(
    { platformName: config.platformName, version: packageVersion() },
    edges.flatMap((e) => e.openApi ?? []),
  );
  const app = createApp({
    logger,
    requestContext,
    httpMetrics: createHttpMetrics(registry),
    authenticate: lifecycle.find(bearerDoorRef)?.middleware(),
    publicRoutes: [...edges.flatMap((e) => e.publicRoutes ?? []), openApiRoutes(document)],
    protectedRoutes: edges.flatMap((e) => e.protectedRoutes ?? []),
    trustedProxies: http.trustedProxies,
    methodNotAllowed: methodNotAllowed(document.paths),
    accessLog: accessLogPolicy(config.log.access),
  });
  const running = await startServer(app, {
    host: http.host,
    port: http.port,
    requestTimeoutSeconds: http.requestTimeoutSeconds,
    readiness: lifecycle.readiness,
    logger,
    ...(tls ? { tls } : {}),
  });
  const upgrades = edges.flatMap((e) => (e.upgrade ? [e.upgrade] : []));
  if (upgrades.length > 1) throw new Error('more than one module takes WebSocket upgrades');
  if (upgrades[0]) running.server.on('upgrade', upgrades[0]);
  logger.info('listening', { url: running.url, platform: config.platformName, ...lifecycle.summary() });

  exitGracefullyOnSignals(running, {
    graceMs: http.shutdownGraceSeconds * 1000,
    logger,
    beforeDrain: () => {
      stopWaitingToRelease();
      return lifecycle.stop();
    },
  });
  return running;
}

if (import.meta.main) {
  try {
    await main(process.argv.slice(2), process.env);
  } catch (err) {
    // A start refused because of configuration names the key and exits 2; so does an address that
    // cannot be listened on (taken, or a privileged port), which is the configuration's to change.
    const listen = err as NodeJS.ErrnoException & { address?: string; port?: number };
    if (listen?.syscall === 'listen') {
      process.stderr.write(
        `platform-apiserver: cannot listen on ${listen.address ?? ''}:${listen.port ?? ''} (http.host, http.port): ${listen.code ?? listen.message}\n`,
      );
      process.exit(2);
    }
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`platform-apiserver: ${err.message}\n`);
    process.exit(2);
  }
}
