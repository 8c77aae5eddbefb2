import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { AccessReviewer, subjectAccessReview } from '../../src/access/access-review.ts';
import type { LoggingConfig } from '../../src/config/config.ts';
import { createApp } from '../../src/http/app.ts';
import { startServer } from '../../src/http/server.ts';
import { Readiness } from '../../src/kernel/readiness.ts';
import { healthRoutes } from '../../src/health/health-routes.ts';
import { configuredLogStore } from '../../src/log-query/configured-store.ts';
import { logRoutes, logsPath } from '../../src/log-query/log-routes.ts';
import { createLoggingMetrics } from '../../src/log-query/logging-metrics.ts';
import { removedLoggingRoutes } from '../../src/log-query/removed-routes.ts';
import { createLogger, createRequestContextStore } from '../../src/observability/logger.ts';
import { kubeTokenAuthenticator } from './kube-token-authenticator.ts';
import { serverKubeConfig } from './nodes-server.ts';

export interface LogsServer {
  url: string;
  /** http://127.0.0.1:<port>/kapis/tenant.platform.io/v1alpha2/logs */
  logsUrl: string;
  registry: Registry;
  /** Every line the server logged. */
  logLines(): string[];
  stop(): Promise<void>;
}

export interface LogsServerOptions {
  kubeconfigPath: string;
  /** The log store configuration as `logging.*` keys would give it; undefined hosts: not configured. */
  logging: Partial<Omit<LoggingConfig, 'tls'>> & { tls?: Partial<LoggingConfig['tls']> };
  exportPageSize?: number;
  platformName?: string;
}

/**
 * The log API assembled as src/main.ts assembles it (real store client, real SubjectAccessReviews
 * against the kube-apiserver), with bearer authentication by the kube-apiserver's static tokens.
 */
export async function startLogsServer(options: LogsServerOptions): Promise<LogsServer> {
  const kc = serverKubeConfig(options.kubeconfigPath);
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    stream: new Writable({
      write: (chunk: Buffer, _e, cb) => {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        cb();
      },
    }),
  });
  const registry = new Registry();
  const readiness = new Readiness();
  const platformName = options.platformName ?? 'platform';
  const metrics = createLoggingMetrics(registry);
  const logging = configuredLogStore(
    {
      hosts: [],
      username: '',
      password: '',
      indexPrefix: 'ks-logstash-log',
      requestTimeoutSeconds: 10,
      exportMaxLines: 100_000,
      ...options.logging,
      tls: { caFile: '', insecureSkipVerify: false, ...options.logging.tls },
    },
    {
      metrics,
      readFile: (p) => readFileSync(p, 'utf8'),
      ...(options.exportPageSize ? { exportPageSize: options.exportPageSize } : {}),
    },
  );
  const reviewer = new AccessReviewer({
    review: subjectAccessReview(kc, 5000),
    allowedTtlMs: 10_000,
    deniedTtlMs: 500,
    staleIfErrorMs: 0,
    maxEntries: 1000,
    registry,
    logger,
  });
  const app = createApp({
    logger,
    requestContext: createRequestContextStore(),
    publicRoutes: [healthRoutes(readiness)],
    authenticate: kubeTokenAuthenticator(kc),
    protectedRoutes: [
      logRoutes({
        platformName,
        logging,
        check: (identity, attributes) => reviewer.check(identity, attributes),
        logger,
        metrics,
      }),
      removedLoggingRoutes(platformName),
    ],
  });
  const running = await startServer(app, {
    host: '127.0.0.1',
    port: 0,
    requestTimeoutSeconds: 30,
    readiness,
    logger,
  });
  return {
    url: running.url,
    logsUrl: `${running.url}${logsPath(platformName)}`,
    registry,
    logLines: () => [...lines],
    stop: async () => {
      await running.shutdown(1000);
      await logging?.store.close();
    },
  };
}
