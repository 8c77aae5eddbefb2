import type { PromData, PromSeries } from './prometheus-client.ts';

/**
 * One series in the original's shape: its labels (`metric`, absent when none), its sample (`value`) or
 * samples (`values`), and the metering members the original always writes, empty here as there.
 */
export interface MetricValue {
  metric?: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
  min_value: string;
  max_value: string;
  avg_value: string;
  sum_value: string;
  fee: string;
  resource_unit: string;
  currency_unit: string;
}

/** One named metric: its data, or `data: {}` and the reason it has none. */
export interface MetricResult {
  metric_name?: string;
  data: { resultType?: 'vector' | 'matrix'; result?: MetricValue[] };
  error?: string;
}

/** The answer of a named-metrics route; the paging members only after a ranking. */
export interface MetricsAnswer {
  results: MetricResult[];
  page?: number;
  total_page?: number;
  total_item?: number;
}

const METERING = {
  min_value: '',
  max_value: '',
  avg_value: '',
  sum_value: '',
  fee: '',
  resource_unit: '',
  currency_unit: '',
} as const;

/**
 * Prometheus' answer as the original reshapes it: an instant query is always a `vector` (a scalar
 * answer has no series), a range query always a `matrix`; a series is kept when `keep` says so.
 */
export function reshape(
  data: PromData,
  range: boolean,
  keep?: (labels: Record<string, string>) => boolean,
): MetricResult['data'] {
  const series =
    Array.isArray(data.result) && data.resultType !== 'scalar' && data.resultType !== 'string'
      ? (data.result as PromSeries[])
      : [];
  const wanted = range ? data.resultType === 'matrix' : data.resultType === 'vector';
  const result: MetricValue[] = [];
  for (const s of wanted ? series : []) {
    if (keep && !keep(s.metric)) continue;
    const labels = Object.keys(s.metric).length > 0 ? { metric: s.metric } : {};
    result.push(
      range
        ? { ...labels, values: s.values ?? [], ...METERING }
        : { ...labels, value: s.value!, ...METERING },
    );
  }
  return { resultType: range ? 'matrix' : 'vector', ...(result.length > 0 ? { result } : {}) };
}

/** A series the ranking placed in a row its metric has no value for. */
const EMPTY: MetricValue = { ...METERING };

const valueOf = (v: MetricValue): number | undefined => (v.value ? Number(v.value[1]) : undefined);

/**
 * The original's ranking of an instant answer: every resource (the `identifier` label) found in any
 * metric gets a row; rows follow `target`'s values (`asc` or `desc`; no value last, then NaN, ties by
 * name), then the resources `target` lacks, by name; every metric is laid out in those rows, so row i of
 * each metric is the same resource (a hole where it has no value). Then one page of `limit` rows.
 */
export function rankAndPage(
  answer: MetricsAnswer,
  options: { target: string; order: 'asc' | 'desc'; identifier: string; page: number; limit: number },
): MetricsAnswer {
  const { target, order, identifier } = options;
  if (answer.results.length === 0) return answer;
  const rankable = (r: MetricResult) => r.data.resultType === 'vector' && r.error === undefined;
  const nameOf = (v: MetricValue) => v.metric?.[identifier] ?? '';
  const ordinal = new Map<string, number>();
  const everyone = new Set<string>();
  for (const r of answer.results) {
    if (!rankable(r)) continue;
    const rows = r.data.result ?? [];
    if (r.metric_name === target) {
      const sorted = [...rows].sort((p, q) => compare(p, q, order, nameOf));
      for (const v of sorted)
        if (nameOf(v) !== '' && !ordinal.has(nameOf(v))) ordinal.set(nameOf(v), ordinal.size);
    }
    for (const v of rows) if (nameOf(v) !== '') everyone.add(nameOf(v));
  }
  const names = [...everyone].sort();
  for (const n of names) if (!ordinal.has(n)) ordinal.set(n, ordinal.size);

  const start = (options.page - 1) * options.limit;
  const results = answer.results.map((r) => {
    if (!rankable(r)) return r;
    const rows: MetricValue[] = names.map(() => EMPTY);
    for (const v of r.data.result ?? []) if (nameOf(v) !== '') rows[ordinal.get(nameOf(v))!] = v;
    const page = rows.slice(start, start + options.limit);
    return { ...r, data: { resultType: r.data.resultType, ...(page.length > 0 ? { result: page } : {}) } };
  });
  const ranked: MetricsAnswer = { results, page: options.page };
  const totalPages = Math.ceil(names.length / options.limit);
  if (totalPages > 0) ranked.total_page = totalPages;
  if (names.length > 0) ranked.total_item = names.length;
  return ranked;
}

function compare(
  p: MetricValue,
  q: MetricValue,
  order: 'asc' | 'desc',
  nameOf: (v: MetricValue) => string,
): number {
  const a = valueOf(p);
  const b = valueOf(q);
  if (a === undefined || b === undefined) {
    if (a === undefined && b === undefined) return byName(p, q, nameOf);
    return a === undefined ? 1 : -1;
  }
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return byName(p, q, nameOf);
  if (Number.isNaN(a) !== Number.isNaN(b)) return Number.isNaN(a) ? 1 : -1;
  return order === 'asc' ? a - b : b - a;
}

const byName = (p: MetricValue, q: MetricValue, nameOf: (v: MetricValue) => string) =>
  nameOf(p) < nameOf(q) ? -1 : nameOf(p) > nameOf(q) ? 1 : 0;
