import { ConfigError, type LoggingConfig } from '../config/config.ts';
import type { ConfiguredLogStore } from './log-routes.ts';
import { LogStore } from './log-store.ts';
import type { LoggingMetrics } from './logging-metrics.ts';

/** The log store the configuration names, or undefined when `logging.hosts` is empty (logging not configured). */
export function configuredLogStore(
  config: LoggingConfig,
  deps: { metrics: LoggingMetrics; readFile: (path: string) => string; exportPageSize?: number },
): ConfiguredLogStore | undefined {
  if (config.hosts.length === 0) return undefined;
  let caPem = '';
  if (config.tls.caFile) {
    try {
      caPem = deps.readFile(config.tls.caFile);
    } catch (err) {
      throw new ConfigError(
        'logging.tls.caFile',
        `cannot read ${config.tls.caFile}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  }
  return {
    store: new LogStore({
      hosts: config.hosts,
      username: config.username,
      password: config.password,
      caPem,
      insecureSkipVerify: config.tls.insecureSkipVerify,
      requestTimeoutMs: config.requestTimeoutSeconds * 1000,
      metrics: deps.metrics,
    }),
    indexPrefix: config.indexPrefix,
    exportMaxLines: config.exportMaxLines,
    requestTimeoutSeconds: config.requestTimeoutSeconds,
    ...(deps.exportPageSize ? { exportPageSize: deps.exportPageSize } : {}),
  };
}
