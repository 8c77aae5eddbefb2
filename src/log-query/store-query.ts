import type { HistogramInterval } from './histogram-interval.ts';
import type { LogFilter, SortOrder } from './log-query.ts';

/**
 * Translation of a LogFilter into the store's query DSL, over documents as the log collector
 * (fluent-bit) writes them: `log`, `time`, `kubernetes.{namespace_name,pod_name,container_name,docker_id}`,
 * strings dynamically mapped as `text` with a `.keyword` sub-field, `time` as a date.
 */

export type QueryClause = Record<string, unknown>;

export const FIELDS = {
  log: 'log',
  time: 'time',
  namespace: 'kubernetes.namespace_name',
  pod: 'kubernetes.pod_name',
  container: 'kubernetes.container_name',
  containerId: 'kubernetes.docker_id',
} as const;

const keyword = (field: string) => `${field}.keyword`;

/** Characters Kubernetes uses for generated name suffixes and ReplicaSet hashes (no vowels, no 0/1/3). */
const SAFE_ALPHABET = '[bcdfghjklmnpqrstvwxz2456789]';
/** Kubernetes truncates a generateName base to 63 - 5 characters before adding 5 random ones. */
const MAX_GENERATED_BASE = 58;

/** Escapes everything but lowercase letters, digits and '-' for a Lucene regexp. */
function regexpLiteral(text: string): string {
  return text.replace(/[^a-z0-9-]/g, (c) => `\\${c}`);
}

/** Pattern of a name made by generateName(`<base>`), where base = literal + middle{length} + '-' (or just literal). */
function generatedName(literal: string, middle?: { chars: string; length: number }): string {
  const baseLength = literal.length + (middle ? middle.length + 1 : 0);
  let base: string;
  if (baseLength <= MAX_GENERATED_BASE) {
    base = regexpLiteral(literal) + (middle ? `${middle.chars}{${middle.length}}-` : '');
  } else if (literal.length >= MAX_GENERATED_BASE || !middle) {
    base = regexpLiteral(literal.slice(0, MAX_GENERATED_BASE));
  } else {
    base = regexpLiteral(literal) + `${middle.chars}{${MAX_GENERATED_BASE - literal.length}}`;
  }
  return `${base}${SAFE_ALPHABET}{5}`;
}

/**
 * A Lucene regexp (anchored to the whole value) matching the names of pods a workload called `name`
 * creates: Deployment `<name>-<hash>-<5>`, StatefulSet `<name>-<ordinal>`, DaemonSet and Job
 * `<name>-<5>` — including Kubernetes' truncation of long generated names.
 */
export function workloadPodPattern(name: string): string {
  const alternatives = new Set<string>();
  alternatives.add(`${regexpLiteral(name)}-[0-9]+`);
  alternatives.add(generatedName(`${name}-`));
  for (let hashLength = 1; hashLength <= 10; hashLength++)
    alternatives.add(generatedName(`${name}-`, { chars: SAFE_ALPHABET, length: hashLength }));
  return [...alternatives].map((a) => `(${a})`).join('|');
}

function escapeWildcard(text: string): string {
  return text.replace(/[\\*?]/g, (c) => `\\${c}`);
}

/** One clause matching any of the values (ORed); undefined for an empty list. */
function anyOf(values: string[], clause: (value: string) => QueryClause): QueryClause | undefined {
  if (values.length === 0) return undefined;
  return { bool: { should: values.map(clause), minimum_should_match: 1 } };
}

const exact = (field: string, values: string[]) =>
  values.length === 0 ? undefined : { terms: { [keyword(field)]: values } };

const phrasePrefix = (field: string) => (value: string) => ({ match_phrase_prefix: { [field]: value } });

/** The time range of a filter: whole seconds, both ends inclusive (end second up to its last millisecond). */
export function timeRange(filter: Pick<LogFilter, 'startTimeSeconds' | 'endTimeSeconds'>): QueryClause {
  const range: Record<string, unknown> = {
    lt: (filter.endTimeSeconds + 1) * 1000,
    format: 'epoch_millis',
  };
  if (filter.startTimeSeconds !== undefined) range['gte'] = filter.startTimeSeconds * 1000;
  return { range: { [FIELDS.time]: range } };
}

/** The query selecting a filter's records: every given parameter must match (bool filter, no scoring). */
export function filterQuery(filter: LogFilter): QueryClause {
  const clauses = [
    exact(FIELDS.namespace, filter.namespaces),
    anyOf(filter.namespaceQuery, (v) => ({
      wildcard: { [keyword(FIELDS.namespace)]: { value: `*${escapeWildcard(v)}*` } },
    })),
    anyOf(filter.workloads, (v) => ({
      regexp: { [keyword(FIELDS.pod)]: { value: workloadPodPattern(v), flags: 'NONE' } },
    })),
    anyOf(filter.workloadQuery, phrasePrefix(FIELDS.pod)),
    exact(FIELDS.pod, filter.pods),
    anyOf(filter.podQuery, phrasePrefix(FIELDS.pod)),
    exact(FIELDS.container, filter.containers),
    anyOf(filter.containerQuery, phrasePrefix(FIELDS.container)),
    anyOf(filter.logQuery, phrasePrefix(FIELDS.log)),
    timeRange(filter),
  ].filter((c): c is QueryClause => c !== undefined);
  return { bool: { filter: clauses } };
}

/**
 * Records by time, then — for records sharing a timestamp (common: many lines in the same millisecond, or
 * a runtime that writes coarse times) — by `_seq_no`, so that paging with from/size is a total order and
 * stable between requests. `_seq_no` is unique within a shard, the same on its replicas and kept through
 * segment merges, and has doc values (no fielddata, unlike `_id`); records tied on both in different
 * shards are ordered by shard, which the store keeps stable.
 */
export function recordOrder(sort: SortOrder): QueryClause[] {
  return [{ [FIELDS.time]: { order: sort } }, { _seq_no: { order: sort } }];
}

export const RECORD_SOURCE = [FIELDS.log, FIELDS.time, FIELDS.namespace, FIELDS.pod, FIELDS.container];

export function recordsBody(filter: LogFilter, sort: SortOrder, from: number, size: number): QueryClause {
  return {
    query: filterQuery(filter),
    sort: recordOrder(sort),
    from,
    size,
    track_total_hits: true,
    _source: RECORD_SOURCE,
  };
}

export function statisticsBody(filter: LogFilter): QueryClause {
  return {
    query: filterQuery(filter),
    size: 0,
    track_total_hits: true,
    aggs: {
      // Exact up to 40000 distinct containers (the store's maximum precision), approximate beyond.
      containers: { cardinality: { field: keyword(FIELDS.containerId), precision_threshold: 40_000 } },
    },
  };
}

export function histogramBody(filter: LogFilter, interval: HistogramInterval): QueryClause {
  return {
    query: filterQuery(filter),
    size: 0,
    track_total_hits: true,
    aggs: {
      histogram: {
        date_histogram: {
          field: FIELDS.time,
          [interval.kind === 'fixed' ? 'fixed_interval' : 'calendar_interval']: interval.value,
        },
      },
    },
  };
}

export function exportBody(filter: LogFilter, sort: SortOrder, pageSize: number): QueryClause {
  return {
    query: filterQuery(filter),
    sort: recordOrder(sort),
    size: pageSize,
    _source: [FIELDS.log],
  };
}

// ---- responses ----

export interface LogRecord {
  log?: string;
  time?: string;
  namespace?: string;
  pod?: string;
  container?: string;
}

interface StoredDocument {
  log?: unknown;
  time?: unknown;
  kubernetes?: { namespace_name?: unknown; pod_name?: unknown; container_name?: unknown };
}

export interface SearchResponseBody {
  _scroll_id?: string;
  hits?: {
    total?: number | { value: number; relation?: string };
    hits?: { _source?: StoredDocument }[];
  };
  aggregations?: {
    containers?: { value?: number };
    histogram?: { buckets?: { key: number; doc_count: number }[] };
  };
}

export function totalHits(body: SearchResponseBody): number {
  const total = body.hits?.total;
  if (typeof total === 'number') return total;
  return total?.value ?? 0;
}

const text = (v: unknown) => (typeof v === 'string' ? v : undefined);

export function toRecord(doc: StoredDocument | undefined): LogRecord {
  const record: LogRecord = {};
  const set = (key: keyof LogRecord, value: unknown) => {
    const s = text(value);
    if (s !== undefined) record[key] = s;
  };
  set('log', doc?.log);
  set('time', doc?.time);
  set('namespace', doc?.kubernetes?.namespace_name);
  set('pod', doc?.kubernetes?.pod_name);
  set('container', doc?.kubernetes?.container_name);
  return record;
}
