import { ConfigError, type Config } from '../config/config.ts';
import { MonitoringService } from './monitoring-service.ts';
import { PrometheusClient } from './prometheus-client.ts';

/** The Prometheus client and the service over it, or undefined when `monitoring.endpoint` is empty. */
export function configuredMonitoring(
  config: Config['monitoring'],
  deps: { readFile: (path: string) => string; namespaceCreated: (namespace: string) => Promise<number> },
): { prometheus: PrometheusClient; service: MonitoringService } | undefined {
  if (config.endpoint === '') return undefined;
  const read = (key: string, path: string) => {
    try {
      return deps.readFile(path);
    } catch (err) {
      throw new ConfigError(key, `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  };
  const bearerToken = config.bearerTokenFile
    ? read('monitoring.bearerTokenFile', config.bearerTokenFile).trim()
    : '';
  const caPem = config.caFile ? read('monitoring.caFile', config.caFile) : '';
  const prometheus = new PrometheusClient({
    endpoint: config.endpoint,
    ...(bearerToken ? { bearerToken } : {}),
    ...(caPem ? { caPem } : {}),
    timeoutMs: config.queryTimeoutSeconds * 1000,
    maxConcurrent: config.maxConcurrentQueries,
    cacheTtlMs: config.cacheTtlSeconds * 1000,
  });
  const service = new MonitoringService({
    prometheus,
    maxPointsPerQuery: config.maxPointsPerQuery,
    namespaceCreated: deps.namespaceCreated,
  });
  return { prometheus, service };
}
