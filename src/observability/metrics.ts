import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';

/**
 * The process's one Prometheus registry. Modules receive it and register their own metrics on it
 * through the factories below, so tests can build isolated registries and nothing relies on
 * prom-client's global default.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client exports these three aggregate counts as gauges named `*_total`, which breaks the
  // Prometheus naming rule that `promtool check metrics` enforces. The per-type gauges without the
  // suffix (nodejs_active_handles{type}, …) carry the same information: sum() them for the total.
  for (const name of NON_CONFORMING_DEFAULTS) registry.removeSingleMetric(name);
  return registry;
}

const NON_CONFORMING_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** Every metric of this project starts with this; the rest is `<subsystem>_<what>_<unit>`. */
export const METRIC_PREFIX = 'platform_';

/**
 * Label names that would carry unbounded values (paths, names chosen by clients) or secrets. A metric
 * declaring one of them is refused at registration, so the mistake shows up in the first test run.
 */
export const FORBIDDEN_LABELS: ReadonlySet<string> = new Set([
  'path',
  'url',
  'uri',
  'query',
  'user',
  'username',
  'email',
  'token',
  'authorization',
  'password',
  'session',
  'session_id',
  'jti',
  'ip',
  'remote_address',
  'request_id',
]);

/** Base units for durations and sizes; a histogram must measure one of them (Prometheus conventions). */
const HISTOGRAM_UNITS = ['_seconds', '_bytes'];

/** Buckets for requests this server answers itself: from a memory-served page (~1 ms) to slow calls. */
export const SERVER_LATENCY_BUCKETS_SECONDS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
/** Buckets for round trips to the kube-apiserver. */
export const UPSTREAM_LATENCY_BUCKETS_SECONDS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

export interface MetricSpec<L extends string> {
  /** Full name, starting with METRIC_PREFIX. */
  name: string;
  help: string;
  labelNames?: readonly L[];
}

export class MetricNameError extends Error {
  constructor(name: string, problem: string) {
    super(`metric ${name}: ${problem}`);
    this.name = 'MetricNameError';
  }
}

/** Throws a MetricNameError when a metric's name, help or labels break the conventions above. */
export function checkSpec(kind: 'counter' | 'gauge' | 'histogram', spec: MetricSpec<string>): void {
  const { name } = spec;
  if (!name.startsWith(METRIC_PREFIX) || !/^[a-z][a-z0-9_]*[a-z0-9]$/.test(name)) {
    throw new MetricNameError(name, `must be snake_case and start with ${METRIC_PREFIX}`);
  }
  if (kind === 'counter' && !name.endsWith('_total'))
    throw new MetricNameError(name, 'a counter ends with _total');
  if (kind !== 'counter' && /_(total|count|sum|bucket)$/.test(name)) {
    throw new MetricNameError(name, `a ${kind} must not end with _total, _count, _sum or _bucket`);
  }
  if (kind === 'histogram' && !HISTOGRAM_UNITS.some((unit) => name.endsWith(unit))) {
    throw new MetricNameError(name, `a histogram ends with its base unit (${HISTOGRAM_UNITS.join(', ')})`);
  }
  if (/_(milliseconds|ms|microseconds|kilobytes|megabytes)(_|$)/.test(name)) {
    throw new MetricNameError(name, 'use base units (seconds, bytes)');
  }
  if (!spec.help.trim()) throw new MetricNameError(name, 'needs a help text');
  for (const label of spec.labelNames ?? []) {
    if (!/^[a-z][a-z0-9_]*$/.test(label)) throw new MetricNameError(name, `label ${label} is not snake_case`);
    if (FORBIDDEN_LABELS.has(label)) {
      throw new MetricNameError(name, `label ${label} would carry unbounded values or secrets`);
    }
  }
}

/**
 * The metric already registered under this name, when it has the same type and labels; lets two
 * modules share one metric (the client and the proxy both observe upstream latency). A clash is a
 * programming error and throws.
 */
function existing<M extends Metric>(
  registry: Registry,
  spec: MetricSpec<string>,
  type: new (...args: never[]) => M,
): M | undefined {
  const found = registry.getSingleMetric(spec.name);
  if (!found) return undefined;
  const labels = (found as unknown as { labelNames: readonly string[] }).labelNames;
  const wanted = spec.labelNames ?? [];
  if (!(found instanceof type) || labels.length !== wanted.length || labels.some((l, i) => l !== wanted[i])) {
    throw new MetricNameError(spec.name, 'already registered with another type or other labels');
  }
  return found;
}

/** A counter (name ends with `_total`), registered once per registry. */
export function counter<L extends string = never>(registry: Registry, spec: MetricSpec<L>): Counter<L> {
  checkSpec('counter', spec);
  return (
    (existing(registry, spec, Counter) as Counter<L> | undefined) ??
    new Counter<L>({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labelNames ?? [],
      registers: [registry],
    })
  );
}

export interface GaugeSpec<L extends string> extends MetricSpec<L> {
  /** Called at every scrape to set the current value(s); for values another module already holds. */
  collect?: (gauge: Gauge<L>) => void;
}

/** A gauge, registered once per registry. A gauge with `collect` has one owner: registering it twice throws. */
export function gauge<L extends string = never>(registry: Registry, spec: GaugeSpec<L>): Gauge<L> {
  checkSpec('gauge', spec);
  const found = existing(registry, spec, Gauge) as Gauge<L> | undefined;
  if (found && spec.collect) throw new MetricNameError(spec.name, 'a collected gauge is registered twice');
  if (found) return found;
  const collect = spec.collect;
  return new Gauge<L>({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    ...(collect
      ? {
          collect(this: Gauge<L>) {
            collect(this);
          },
        }
      : {}),
  });
}

export interface HistogramSpec<L extends string> extends MetricSpec<L> {
  buckets: readonly number[];
}

/** A histogram of a base unit (name ends with `_seconds` or `_bytes`), registered once per registry. */
export function histogram<L extends string = never>(
  registry: Registry,
  spec: HistogramSpec<L>,
): Histogram<L> {
  checkSpec('histogram', spec);
  return (
    (existing(registry, spec, Histogram) as Histogram<L> | undefined) ??
    new Histogram<L>({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labelNames ?? [],
      buckets: [...spec.buckets],
      registers: [registry],
    })
  );
}
