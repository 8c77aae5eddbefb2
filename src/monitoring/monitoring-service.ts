import { expressionOf, metricNames, namespacedPodFilter, type Scope } from './metric-expressions.ts';
import {
  rankAndPageSeries,
  reshape,
  type InstantSeries,
  type MetricResult,
  type MetricsAnswer,
} from './metric-results.ts';
import type { Level } from './metric-table.ts';
import { confineToNamespace } from './namespace-confinement.ts';
import type { PrometheusClient } from './prometheus-client.ts';
import { parameter, queryTime, ranking, selectMetrics, type QueryTime } from './query-parameters.ts';
import { ApiError } from '../kernel/api-error.ts';

type Query = Readonly<Record<string, unknown>>;

/** The label a level's resources are named by, for ranking (cluster and components have none). */
const IDENTIFIER: Partial<Record<Level, string>> = {
  node: 'node',
  workspace: 'workspace',
  namespace: 'namespace',
  workload: 'workload',
  pod: 'pod',
  container: 'container',
  pvc: 'persistentvolumeclaim',
  ingress: 'ingress',
};

export interface MonitoringServiceOptions {
  prometheus: PrometheusClient;
  maxPointsPerQuery: number;
  /** When the namespace was created (Unix seconds); throws the ApiError to answer when it cannot be read. */
  namespaceCreated: (namespace: string) => Promise<number>;
  now?: () => number;
}

/** The answers the original's monitoring routes give, asked of Prometheus. */
export class MonitoringService {
  readonly #options: MonitoringServiceOptions;

  constructor(options: MonitoringServiceOptions) {
    this.#options = options;
  }

  /** A named-metrics route: the metrics `metrics_filter` selects at this level and scope. */
  async named(level: Level, scope: Scope, query: Query): Promise<MetricsAnswer> {
    const names = metricNames(level);
    const asked = queryTime(query, this.#now(), this.#options.maxPointsPerQuery);
    const when = scope.namespace ? await this.#sinceCreation(scope.namespace, asked) : asked;
    // Before the namespace existed: every metric of the level, without data (the original's "no hit").
    if (when === undefined) return { results: names.map((metric_name) => ({ metric_name, data: {} })) };
    const rank = ranking(query);
    const selected = selectMetrics(names, parameter(query, 'metrics_filter'));
    const keep = level === 'pod' ? namespacedPodFilter(scope) : undefined;
    const identifier = IDENTIFIER[level];
    if (when.kind === 'instant' && rank && identifier) {
      // Ranked from the series indexed in Prometheus' answers: only the page's rows are parsed.
      const answers = await Promise.all(
        selected.map((metric_name) =>
          this.#series(metric_name, expressionOf(level, metric_name, scope), when, keep),
        ),
      );
      return rankAndPageSeries(answers, { ...rank, identifier });
    }
    const results = await Promise.all(
      selected.map((metric_name) =>
        this.#ask(metric_name, expressionOf(level, metric_name, scope), when, keep),
      ),
    );
    return { results };
  }

  /** `…/targets/query`: the caller's own PromQL, confined to the namespace when one is named. */
  async custom(namespace: string | undefined, query: Query): Promise<MetricResult> {
    const asked = queryTime(query, this.#now(), this.#options.maxPointsPerQuery);
    const when = namespace ? await this.#sinceCreation(namespace, asked) : asked;
    if (when === undefined) return { data: {} };
    const expr = parameter(query, 'expr') ?? '';
    return this.#ask(undefined, namespace ? confineToNamespace(expr, namespace) : expr, when);
  }

  /** `…/targets/labelsets`: the label sets of the series `metric` selects over [start, end]. */
  async labelSets(
    namespace: string | undefined,
    query: Query,
  ): Promise<{ data: Record<string, string>[] | null }> {
    const metric = parameter(query, 'metric');
    if (
      metric === undefined ||
      parameter(query, 'start') === undefined ||
      parameter(query, 'end') === undefined
    )
      throw new ApiError('BadRequest', 'required fields are missing: [metric, start, end]');
    const asked = queryTime(query, this.#now(), Number.MAX_SAFE_INTEGER);
    const when = namespace ? await this.#sinceCreation(namespace, asked) : asked;
    if (when === undefined || when.kind !== 'range') return { data: null };
    const match = namespace ? confineToNamespace(metric, namespace) : metric;
    try {
      const sets = await this.#options.prometheus.series(match, when.start, when.end);
      const data = sets.map(({ __name__: _, ...labels }) => labels);
      return { data: data.length > 0 ? data : null };
    } catch {
      return { data: [] };
    }
  }

  /** `…/targets/metadata`: what the (namespace's) targets say of their metrics, one entry per metric. */
  async metadata(
    namespace: string | undefined,
  ): Promise<{ data: { metric: string; type: string; help: string }[] | null }> {
    try {
      const items = await this.#options.prometheus.targetsMetadata(
        namespace ? `{namespace=${JSON.stringify(namespace)}}` : undefined,
      );
      const seen = new Map<string, { metric: string; type: string; help: string }>();
      for (const item of items)
        if (!seen.has(item.metric))
          seen.set(item.metric, { metric: item.metric, type: item.type, help: item.help });
      return { data: seen.size > 0 ? [...seen.values()] : null };
    } catch {
      return { data: null };
    }
  }

  async #ask(
    metric_name: string | undefined,
    expr: string,
    when: QueryTime,
    keep?: (labels: Record<string, string>) => boolean,
  ): Promise<MetricResult> {
    const named = metric_name === undefined ? {} : { metric_name };
    try {
      const prometheus = this.#options.prometheus;
      const data =
        when.kind === 'instant'
          ? await prometheus.query(expr, when.time)
          : await prometheus.queryRange(expr, when.start, when.end, when.step);
      return { ...named, data: reshape(data, when.kind === 'range', keep) };
    } catch (err) {
      return { ...named, data: {}, error: (err as Error).message };
    }
  }

  /** An instant named metric's kept series, indexed, not parsed; or its error. */
  async #series(
    metric_name: string,
    expr: string,
    when: QueryTime & { kind: 'instant' },
    keep?: (labels: Record<string, string>) => boolean,
  ): Promise<InstantSeries> {
    try {
      const series = await this.#options.prometheus.queryVector(expr, when.time);
      return { metric_name, series: keep ? series.filter(keep) : series };
    } catch (err) {
      return { metric_name, error: (err as Error).message };
    }
  }

  /**
   * The query moved to after the namespace's creation, as the original does: undefined when it asks
   * only of before; a range starting earlier starts at the first of its steps after the creation.
   */
  async #sinceCreation(namespace: string, when: QueryTime): Promise<QueryTime | undefined> {
    const created = await this.#options.namespaceCreated(namespace);
    if (when.kind === 'instant') return when.time < created ? undefined : when;
    if (when.end < created) return undefined;
    if (when.start >= created) return when;
    let start = when.end;
    while (start - when.step > created) start -= when.step;
    return { ...when, start };
  }

  #now(): number {
    return Math.floor((this.#options.now ?? Date.now)() / 1000);
  }
}
