import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's one Prometheus registry. Modules receive it and register their own metrics on it,
 * so tests can build isolated registries and nothing relies on prom-client's global default.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
