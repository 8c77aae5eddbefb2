import type { Metric, Registry } from 'prom-client';
import { checkSpec, type HistogramSpec, MetricNameError, type MetricSpec } from './metrics.ts';

/**
 * Counters and histograms for the per-request path. A caller resolves a label set once, with
 * `series(labels)`, and keeps the handle: counting is then an addition, observing a bucket search.
 * prom-client validates and hashes the label set on every `inc` and `observe`; at ten thousand
 * requests a second, with five such calls per request, that was a tenth of a node page's CPU
 * (docs/benchmarks.md). The exposition is prom-client's: the registry serialises these metrics
 * like its own.
 */

export type SeriesLabels<L extends string> = Readonly<Record<L, string>>;

export interface CounterSeries {
  inc(by?: number): void;
}

export interface HistogramSeries {
  observe(value: number): void;
}

/** What prom-client's registry reads of a metric: `get()` at every scrape, `reset()` from resetMetrics(). */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

abstract class SeriesMetric<L extends string, S> {
  abstract readonly type: 'counter' | 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly #series = new Map<string, { labels: SeriesLabels<L>; series: S }>();

  constructor(name: string, help: string, labelNames: readonly L[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  /** The series of this label set, created at zero on first use. Keep it: looking it up costs a key. */
  series(labels: SeriesLabels<L>): S {
    let key = '';
    for (const name of this.labelNames) key += `${labels[name]}\u0000`;
    let entry = this.#series.get(key);
    if (!entry) {
      const own = {} as Record<L, string>;
      for (const name of this.labelNames) {
        const value: unknown = labels[name];
        if (typeof value !== 'string') throw new MetricNameError(this.name, `label ${name} has no value`);
        own[name] = value;
      }
      entry = { labels: own, series: this.create() };
      this.#series.set(key, entry);
    }
    return entry.series;
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: Sample[] }> {
    const values: Sample[] = [];
    for (const { labels, series } of this.#series.values()) this.samples(labels, series, values);
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every series in place: handles held by callers keep counting into the registry. */
  reset(): void {
    for (const { series } of this.#series.values()) this.zero(series);
  }

  protected abstract create(): S;
  protected abstract zero(series: S): void;
  protected abstract samples(labels: SeriesLabels<L>, series: S, into: Sample[]): void;
}

class Count implements CounterSeries {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

export class SeriesCounter<L extends string> extends SeriesMetric<L, CounterSeries> {
  readonly type = 'counter';

  /** For label sets seen rarely; on a hot path keep the series instead. */
  inc(labels: SeriesLabels<L>, by = 1): void {
    this.series(labels).inc(by);
  }

  protected create(): Count {
    return new Count();
  }

  protected zero(series: Count): void {
    series.value = 0;
  }

  protected samples(labels: SeriesLabels<L>, series: Count, into: Sample[]): void {
    into.push({ labels, value: series.value });
  }
}

class Distribution implements HistogramSeries {
  count = 0;
  sum = 0;
  /** Per bucket, not cumulative; the last one counts values above every bound. */
  readonly counts: number[];
  readonly #bounds: readonly number[];

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    // As prom-client does: a value that is no number is a programming error, not a sample.
    if (!Number.isFinite(value)) throw new TypeError(`not a finite value: ${value}`);
    let i = 0;
    while (i < this.#bounds.length && value > this.#bounds[i]!) i++;
    this.counts[i]!++;
    this.count++;
    this.sum += value;
  }
}

export class SeriesHistogram<L extends string> extends SeriesMetric<L, HistogramSeries> {
  readonly type = 'histogram';
  readonly #bounds: readonly number[];

  constructor(name: string, help: string, labelNames: readonly L[], bounds: readonly number[]) {
    super(name, help, labelNames);
    this.#bounds = [...bounds].sort((a, b) => a - b);
  }

  protected create(): Distribution {
    return new Distribution(this.#bounds);
  }

  protected zero(series: Distribution): void {
    series.counts.fill(0);
    series.count = 0;
    series.sum = 0;
  }

  protected samples(labels: SeriesLabels<L>, series: Distribution, into: Sample[]): void {
    const bucket = `${this.name}_bucket`;
    let cumulative = 0;
    this.#bounds.forEach((le, i) => {
      cumulative += series.counts[i]!;
      into.push({ labels: { le, ...labels }, value: cumulative, metricName: bucket });
    });
    into.push({ labels: { le: '+Inf', ...labels }, value: series.count, metricName: bucket });
    into.push({ labels, value: series.sum, metricName: `${this.name}_sum` });
    into.push({ labels, value: series.count, metricName: `${this.name}_count` });
  }
}

/**
 * Registers a series metric, or returns the one already registered under its name when it is of the
 * same kind with the same labels (two apps composed on one registry share it).
 */
function register<M extends SeriesMetric<string, unknown>>(registry: Registry, metric: M): M {
  const found: unknown = registry.getSingleMetric(metric.name);
  if (found === undefined) {
    // The registry needs only name, help, type, aggregator, get() and reset(); prom-client's type
    // names its own four classes.
    registry.registerMetric(metric as unknown as Metric);
    return metric;
  }
  if (
    !(found instanceof SeriesMetric) ||
    found.constructor !== metric.constructor ||
    found.labelNames.length !== metric.labelNames.length ||
    found.labelNames.some((l, i) => l !== metric.labelNames[i])
  ) {
    throw new MetricNameError(metric.name, 'already registered with another type or other labels');
  }
  return found as M;
}

/** A counter (name ends with `_total`) whose label sets are resolved once; see the module comment. */
export function seriesCounter<L extends string>(registry: Registry, spec: MetricSpec<L>): SeriesCounter<L> {
  checkSpec('counter', spec);
  return register(registry, new SeriesCounter<L>(spec.name, spec.help, spec.labelNames ?? []));
}

/** A histogram of a base unit whose label sets are resolved once; see the module comment. */
export function seriesHistogram<L extends string>(
  registry: Registry,
  spec: HistogramSpec<L>,
): SeriesHistogram<L> {
  checkSpec('histogram', spec);
  return register(
    registry,
    new SeriesHistogram<L>(spec.name, spec.help, spec.labelNames ?? [], spec.buckets),
  );
}
