import { indicesFor } from './index-names.ts';
import type { LogQuery } from './log-query.ts';
import type { LogStore } from './log-store.ts';
import {
  histogramBody,
  recordsBody,
  statisticsBody,
  toRecord,
  totalHits,
  type LogRecord,
} from './store-query.ts';

/** Response bodies of the JSON operations, in the shapes of the system we re-create. */
export interface QueryResult {
  query: { total: number; records: LogRecord[] };
}
export interface StatisticsResult {
  statistics: { containers: number; logs: number };
}
export interface HistogramResult {
  histogram: { total: number; histograms: { time: number; count: number }[] };
}
export type SearchResult = QueryResult | StatisticsResult | HistogramResult;

/** Runs the query, statistics and histogram operations against the store. */
export async function searchLogs(
  store: LogStore,
  indexPrefix: string,
  q: LogQuery & { operation: 'query' | 'statistics' | 'histogram' },
  signal?: AbortSignal,
): Promise<SearchResult> {
  const indices = indicesFor(indexPrefix, q.filter.startTimeSeconds, q.filter.endTimeSeconds);
  switch (q.operation) {
    case 'query': {
      const body = await store.search(
        { indices, body: recordsBody(q.filter, q.sort, q.from, q.size) },
        signal,
      );
      return {
        query: { total: totalHits(body), records: (body.hits?.hits ?? []).map((h) => toRecord(h._source)) },
      };
    }
    case 'statistics': {
      const body = await store.search({ indices, body: statisticsBody(q.filter) }, signal);
      return {
        statistics: { containers: body.aggregations?.containers?.value ?? 0, logs: totalHits(body) },
      };
    }
    case 'histogram': {
      const body = await store.search({ indices, body: histogramBody(q.filter, q.interval) }, signal);
      const buckets = body.aggregations?.histogram?.buckets ?? [];
      return {
        histogram: {
          total: totalHits(body),
          histograms: buckets.map((b) => ({ time: b.key, count: b.doc_count })),
        },
      };
    }
  }
}
