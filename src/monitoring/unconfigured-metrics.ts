import { ApiError } from '../kernel/api-error.ts';

/** Said for every metric while this server has no metrics backend. */
export const NOT_CONFIGURED = 'monitoring is not configured: this server has no metrics backend';

/** One metric of the original's monitoring answer, here always without data. */
export interface MetricResult {
  metric_name: string;
  /** The original serialises its (empty) data member as `{}`. */
  data: Record<string, never>;
  error: string;
}

export interface MetricsAnswer {
  results: MetricResult[];
}

/** A metric name as the original names them (`node_cpu_usage`, `kubesphere_user_count`). */
const METRIC_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The metric names a `metrics_filter` asks for. The console sends `a|b|c$`: the names joined with `|`,
 * closed by `$` (the original treats it as a regular expression over the metrics it knows). Alternatives
 * that are plain names (an optional `^` before, `$` after) are taken; anything else (`.*`, `node_.*`)
 * names no metric here, since there is no backend whose metric list it could select from.
 */
export function requestedMetrics(filter: string | undefined): string[] {
  if (filter === undefined) return [];
  const names = new Set<string>();
  for (const alternative of filter.split('|')) {
    const name = alternative.replace(/^\^/, '').replace(/\$$/, '');
    // The original never answers its metering metrics on these routes.
    if (METRIC_NAME.test(name) && !name.startsWith('meter_')) names.add(name);
  }
  return [...names];
}

/** The answer for these metrics: each one present, each one carrying the not-configured error. */
export function unconfiguredAnswer(metrics: readonly string[]): MetricsAnswer {
  return { results: metrics.map((metric_name) => ({ metric_name, data: {}, error: NOT_CONFIGURED })) };
}

/** A query parameter given once (a string), absent (undefined), or a 400 naming it. */
export function singleParameter(query: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  const message = `query parameter "${name}" must be given at most once`;
  throw new ApiError('BadRequest', message, {
    details: { causes: [{ reason: 'FieldValueDuplicate', message, field: name }] },
  });
}
