import type { PromData, PromSeries } from './prometheus-client.ts';
import { labelOf, seriesOf, type IndexedSample } from './vector-index.ts';

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

/**
 * The series of Prometheus' answer the original keeps: an instant query's only when it is a `vector`
 * (a scalar answer has no series), a range query's only when a `matrix`; and of those, the ones `keep`
 * accepts.
 */
export function keptSeries(
  data: PromData,
  range: boolean,
  keep?: (labels: Record<string, string>) => boolean,
): PromSeries[] {
  if (!Array.isArray(data.result) || data.resultType !== (range ? 'matrix' : 'vector')) return [];
  const series = data.result as PromSeries[];
  return keep ? series.filter((s) => keep(s.metric)) : series;
}

function hasLabels(labels: Record<string, string>): boolean {
  for (const _ in labels) return true;
  return false;
}

/**
 * One series in the original's shape: its labels only when it has some, then its sample(s), then the
 * metering members. Written as literals of a few fixed shapes, not spreads, as an answer makes thousands.
 */
export function metricValue(s: PromSeries, range: boolean): MetricValue {
  const m = '';
  if (range) {
    const values = s.values ?? [];
    return hasLabels(s.metric)
      ? {
          metric: s.metric,
          values,
          min_value: m,
          max_value: m,
          avg_value: m,
          sum_value: m,
          fee: m,
          resource_unit: m,
          currency_unit: m,
        }
      : {
          values,
          min_value: m,
          max_value: m,
          avg_value: m,
          sum_value: m,
          fee: m,
          resource_unit: m,
          currency_unit: m,
        };
  }
  const value = s.value!;
  return hasLabels(s.metric)
    ? {
        metric: s.metric,
        value,
        min_value: m,
        max_value: m,
        avg_value: m,
        sum_value: m,
        fee: m,
        resource_unit: m,
        currency_unit: m,
      }
    : {
        value,
        min_value: m,
        max_value: m,
        avg_value: m,
        sum_value: m,
        fee: m,
        resource_unit: m,
        currency_unit: m,
      };
}

/** A metric's `data` from its kept series: a `vector` or `matrix`, `result` only when there is one. */
function dataOf(result: MetricValue[], range: boolean): MetricResult['data'] {
  return result.length > 0
    ? { resultType: range ? 'matrix' : 'vector', result }
    : { resultType: range ? 'matrix' : 'vector' };
}

/**
 * Prometheus' answer as the original reshapes it: an instant query is always a `vector` (a scalar
 * answer has no series), a range query always a `matrix`; a series is kept when `keep` says so.
 */
export function reshape(
  data: PromData,
  range: boolean,
  keep?: (labels: Record<string, string>) => boolean,
): MetricResult['data'] {
  return dataOf(
    keptSeries(data, range, keep).map((s) => metricValue(s, range)),
    range,
  );
}

/** One metric to rank: its series, or undefined when it is not ranked (an error, a range). */
interface RankInput<T> {
  metric_name?: string;
  rows: readonly T[] | undefined;
}

interface RankOptions {
  target: string;
  order: 'asc' | 'desc';
  identifier: string;
  page: number;
  limit: number;
}

/** How a ranking reads a series: the resource it is of ('' for none), its sample's value. */
interface RankReader<T> {
  nameOf: (row: T) => string;
  valueOf: (row: T) => number | undefined;
}

/**
 * The original's ranking: every resource (the `identifier` label) found in any ranked metric gets a
 * row; rows follow `target`'s values (`asc` or `desc`; no value last, then NaN, ties by name), then the
 * resources `target` lacks, by name; every metric is laid out in those rows, so row i of each metric is
 * the same resource (undefined where it has no value). Only the requested page's rows are laid out.
 */
function rankedPage<T>(
  inputs: readonly RankInput<T>[],
  options: RankOptions,
  read: RankReader<T>,
): { pages: ((T | undefined)[] | undefined)[]; total: number } {
  const names = inputs.map(({ rows }) => rows?.map(read.nameOf));
  const ordinal = new Map<string, number>();
  const everyone = new Set<string>();
  inputs.forEach(({ metric_name, rows }, i) => {
    const named = names[i];
    if (!rows || !named) return;
    if (metric_name === options.target)
      for (const name of byValue(rows, named, options.order, read.valueOf))
        if (name !== '' && !ordinal.has(name)) ordinal.set(name, ordinal.size);
    for (const name of named) if (name !== '') everyone.add(name);
  });
  const rest: string[] = [];
  for (const name of everyone) if (!ordinal.has(name)) rest.push(name);
  rest.sort();
  for (const name of rest) ordinal.set(name, ordinal.size);

  const total = ordinal.size;
  const start = (options.page - 1) * options.limit;
  const size = Math.max(0, Math.min(options.limit, total - start));
  const pages = inputs.map(({ rows }, i) => {
    const named = names[i];
    if (!rows || !named) return undefined;
    const page = new Array<T | undefined>(size).fill(undefined);
    // A later series of the same resource takes its row, as the original lays them out.
    rows.forEach((row, j) => {
      const name = named[j]!;
      if (name === '') return;
      const at = ordinal.get(name)! - start;
      if (at >= 0 && at < size) page[at] = row;
    });
    return page;
  });
  return { pages, total };
}

/** The paging members of a ranked answer. */
function paging(page: number, limit: number, total: number): Omit<MetricsAnswer, 'results'> {
  const members: Omit<MetricsAnswer, 'results'> = { page };
  const totalPages = Math.ceil(total / limit);
  if (totalPages > 0) members.total_page = totalPages;
  if (total > 0) members.total_item = total;
  return members;
}

/** A series the ranking placed in a row its metric has no value for. */
const EMPTY: MetricValue = {
  min_value: '',
  max_value: '',
  avg_value: '',
  sum_value: '',
  fee: '',
  resource_unit: '',
  currency_unit: '',
};

const rankable = (r: MetricResult) => r.data.resultType === 'vector' && r.error === undefined;

/** The original's ranking of an instant answer (see rankedPage), then one page of `limit` rows. */
export function rankAndPage(answer: MetricsAnswer, options: RankOptions): MetricsAnswer {
  if (answer.results.length === 0) return answer;
  const { pages, total } = rankedPage(
    answer.results.map((r) => ({
      metric_name: r.metric_name,
      rows: rankable(r) ? (r.data.result ?? []) : undefined,
    })),
    options,
    {
      nameOf: (v) => v.metric?.[options.identifier] ?? '',
      valueOf: (v) => (v.value ? Number(v.value[1]) : undefined),
    },
  );
  const results = answer.results.map((r, i) => {
    const page = pages[i];
    if (!page) return r;
    return {
      ...r,
      data: dataOf(
        page.map((v) => v ?? EMPTY),
        false,
      ),
    };
  });
  return { results, ...paging(options.page, options.limit, total) };
}

/** One metric of an instant answer before reshaping: the series kept, or why there are none. */
export interface InstantSeries {
  metric_name: string;
  series?: IndexedSample[];
  error?: string;
}

/**
 * rankAndPage over Prometheus' series as indexed in its answers, the same answer byte for byte: only
 * the page's rows are parsed and reshaped, not every resource's series of every metric.
 */
export function rankAndPageSeries(answers: readonly InstantSeries[], options: RankOptions): MetricsAnswer {
  if (answers.length === 0) return { results: [] };
  const { pages, total } = rankedPage(
    answers.map((a) => ({
      metric_name: a.metric_name,
      rows: a.error === undefined ? (a.series ?? []) : undefined,
    })),
    options,
    {
      nameOf: (s) => labelOf(s, options.identifier) ?? '',
      valueOf: (s) => (s.value ? Number(s.value[1]) : undefined),
    },
  );
  const results = answers.map((a, i): MetricResult => {
    const page = pages[i];
    if (!page) return { metric_name: a.metric_name, data: {}, error: a.error ?? '' };
    return {
      metric_name: a.metric_name,
      data: dataOf(
        page.map((s) => (s ? metricValue(seriesOf(s), false) : EMPTY)),
        false,
      ),
    };
  });
  return { results, ...paging(options.page, options.limit, total) };
}

/** The names of `rows` in ranking order; each value read once, not per comparison. */
function byValue<T>(
  rows: readonly T[],
  names: readonly string[],
  order: 'asc' | 'desc',
  valueOf: (row: T) => number | undefined,
): string[] {
  const keyed = rows.map((row, i) => ({ name: names[i]!, value: valueOf(row) }));
  keyed.sort((p, q) => compare(p, q, order));
  return keyed.map((k) => k.name);
}

interface SortKey {
  name: string;
  value: number | undefined;
}

function compare(p: SortKey, q: SortKey, order: 'asc' | 'desc'): number {
  const a = p.value;
  const b = q.value;
  if (a === undefined || b === undefined) {
    if (a === undefined && b === undefined) return byName(p, q);
    return a === undefined ? 1 : -1;
  }
  if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return byName(p, q);
  if (Number.isNaN(a) !== Number.isNaN(b)) return Number.isNaN(a) ? 1 : -1;
  return order === 'asc' ? a - b : b - a;
}

const byName = (p: SortKey, q: SortKey) => (p.name < q.name ? -1 : p.name > q.name ? 1 : 0);
