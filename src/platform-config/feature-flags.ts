import type { Config } from '../config/config.ts';

/**
 * The original's `configz` keys, in its order: each names an optional component of that system. The
 * original's console turns menus and pages on and off by them (`globals.ksConfig`), so a key is true
 * here exactly when this server serves what the console would then call.
 */
const COMPONENTS = [
  'devops',
  'sonarqube',
  'kubernetes',
  'servicemesh',
  'network',
  'network.ippool',
  'network.topology',
  'cache',
  's3',
  'openpitrix',
  'openpitrix.appstore',
  'monitoring',
  'logging',
  'authentication',
  'authorization',
  'multicluster',
  'events',
  'auditing',
  'alerting',
  'notification',
  'kubeedge',
  'edgeruntime',
  'metering',
  'gateway',
  'gpu',
  'terminal',
] as const;

export type Component = (typeof COMPONENTS)[number];

/**
 * What this server serves: the Kubernetes API, its own login, RBAC-checked APIs, the log query API once a
 * store is configured, and monitoring once a Prometheus is (the original drops its monitoring options,
 * and so reports false, exactly when their endpoint is empty).
 */
export function featureFlags(config: Pick<Config, 'logging' | 'monitoring'>): Record<Component, boolean> {
  const served: Partial<Record<Component, boolean>> = {
    kubernetes: true,
    authentication: true,
    authorization: true,
    logging: config.logging.hosts.length > 0,
    monitoring: config.monitoring.endpoint !== '',
  };
  return Object.fromEntries(COMPONENTS.map((c) => [c, served[c] ?? false])) as Record<Component, boolean>;
}
