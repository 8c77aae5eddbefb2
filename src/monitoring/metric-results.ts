import type { PromData, PromSeries } from './prometheus-client.ts';
import { labelKey, type Vector } from './vector-index.ts';

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

/** One metric to rank: how many series it has, or undefined when it is not ranked (an error, a range). */
interface RankInput {
  metric_name?: string;
  rows: number | undefined;
}

interface RankOptions {
  target: string;
  order: 'asc' | 'desc';
  identifier: string;
  page: number;
  limit: number;
}

/** How a ranking reads row `row` of input `input`: the resource it is of ('' for none), its value. */
interface RankReader {
  nameOf: (input: number, row: number) => string;
  valueOf: (input: number, row: number) => number | undefined;
}

/**
 * The original's ranking: every resource (the `identifier` label) found in any ranked metric gets a
 * row; rows follow `target`'s values (`asc` or `desc`; no value last, then NaN, ties by name), then the
 * resources `target` lacks, by name; every metric is laid out in those rows, so row i of each metric is
 * the same resource (-1 where it has no value). Only the requested page's rows are found: of the
 * target, its best page × limit resources, not all of them in order.
 */
function rankedPage(
  inputs: readonly RankInput[],
  options: RankOptions,
  read: RankReader,
): { pages: (Int32Array | undefined)[]; total: number } {
  const start = (options.page - 1) * options.limit;
  const end = start + options.limit;
  const names = inputs.map(({ rows }, i) =>
    rows === undefined ? undefined : Array.from({ length: rows }, (_, row) => read.nameOf(i, row)),
  );
  /** The resources given a row so far (in the page or not), and the page's: name → row in the page. */
  const ranked = new Set<string>();
  const inPage = new Map<string, number>();
  const place = (name: string, ordinal: number) => {
    if (ordinal >= start && ordinal < end) inPage.set(name, ordinal - start);
  };
  inputs.forEach(({ metric_name }, i) => {
    const named = names[i];
    if (!named || metric_name !== options.target) return;
    const rows: number[] = [];
    for (let row = 0; row < named.length; row++)
      if (named[row] !== '' && !ranked.has(named[row]!)) rows.push(row);
    const keys = rows.map((row) => ({ name: named[row]!, value: read.valueOf(i, row) }));
    const best = bestDistinct(keys, end - ranked.size, options.order);
    best.forEach((key, j) => place(key.name, ranked.size + j));
    for (const key of keys) ranked.add(key.name);
  });
  const rest: string[] = [];
  for (const named of names)
    if (named)
      for (const name of named)
        if (name !== '' && !ranked.has(name)) {
          ranked.add(name);
          rest.push(name);
        }
  const before = ranked.size - rest.length;
  if (end > before) rest.sort().forEach((name, j) => place(name, before + j));

  const size = Math.max(0, Math.min(options.limit, ranked.size - start));
  const pages = names.map((named) => {
    if (!named) return undefined;
    const page = new Int32Array(size).fill(-1);
    // A later series of the same resource takes its row, as the original lays them out.
    named.forEach((name, row) => {
      const at = inPage.get(name);
      if (at !== undefined && at < size) page[at] = row;
    });
    return page;
  });
  return { pages, total: ranked.size };
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
  const rows = answer.results.map((r) => (rankable(r) ? (r.data.result ?? []) : undefined));
  const { pages, total } = rankedPage(
    answer.results.map((r, i) => ({ metric_name: r.metric_name, rows: rows[i]?.length })),
    options,
    {
      nameOf: (i, row) => rows[i]![row]!.metric?.[options.identifier] ?? '',
      valueOf: (i, row) => {
        const value = rows[i]![row]!.value;
        return value ? Number(value[1]) : undefined;
      },
    },
  );
  const results = answer.results.map((r, i) => {
    const page = pages[i];
    if (!page) return r;
    return {
      ...r,
      data: dataOf(
        Array.from(page, (row) => (row < 0 ? EMPTY : rows[i]![row]!)),
        false,
      ),
    };
  });
  return { results, ...paging(options.page, options.limit, total) };
}

/** One metric of an instant answer before reshaping: the series kept, or why there are none. */
export interface InstantSeries {
  metric_name: string;
  series?: Vector;
  error?: string;
}

/**
 * rankAndPage over Prometheus' series as indexed in its answers, the same answer byte for byte: only
 * the page's rows are parsed and reshaped, not every resource's series of every metric.
 */
export function rankAndPageSeries(answers: readonly InstantSeries[], options: RankOptions): MetricsAnswer {
  if (answers.length === 0) return { results: [] };
  const key = labelKey(options.identifier);
  const { pages, total } = rankedPage(
    answers.map((a) => ({
      metric_name: a.metric_name,
      rows: a.error === undefined ? (a.series?.length ?? 0) : undefined,
    })),
    options,
    {
      nameOf: (i, row) => answers[i]!.series!.label(row, key) ?? '',
      valueOf: (i, row) => answers[i]!.series!.value(row),
    },
  );
  const results = answers.map((a, i): MetricResult => {
    const page = pages[i];
    if (!page) return { metric_name: a.metric_name, data: {}, error: a.error ?? '' };
    return {
      metric_name: a.metric_name,
      data: dataOf(
        Array.from(page, (row) => (row < 0 ? EMPTY : metricValue(a.series!.series(row), false))),
        false,
      ),
    };
  });
  return { results, ...paging(options.page, options.limit, total) };
}

/**
 * The best `count` of `keys` in ranking order, each name once (at its best): a bounded sorted list
 * when the page is small beside the keys, a sort of them all otherwise.
 */
function bestDistinct(keys: SortKey[], count: number, order: 'asc' | 'desc'): SortKey[] {
  if (count <= 0) return [];
  const cmp = (p: SortKey, q: SortKey) => compare(p, q, order);
  if (count * 16 >= keys.length) {
    const seen = new Set<string>();
    const sorted = [...keys].sort(cmp).filter((k) => !seen.has(k.name) && seen.add(k.name));
    return sorted.slice(0, count);
  }
  const best: SortKey[] = [];
  for (const key of keys) {
    if (best.length === count && cmp(key, best[count - 1]!) >= 0) continue;
    const same = best.findIndex((b) => b.name === key.name);
    if (same >= 0) {
      if (cmp(key, best[same]!) >= 0) continue;
      best.splice(same, 1);
    }
    let at = best.length;
    while (at > 0 && cmp(key, best[at - 1]!) < 0) at--;
    best.splice(at, 0, key);
    if (best.length > count) best.pop();
  }
  return best;
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
