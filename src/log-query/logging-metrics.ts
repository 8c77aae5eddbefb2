import type { Counter, Histogram, Registry } from 'prom-client';
import { UPSTREAM_LATENCY_BUCKETS_SECONDS, counter, histogram } from '../observability/metrics.ts';

/** Metrics of the log API and its store calls; registered whether or not a store is configured. */
export interface LoggingMetrics {
  storeRequests: Counter<'operation' | 'outcome'>;
  storeRequestSeconds: Histogram<'operation' | 'outcome'>;
  exports: Counter<'outcome'>;
  exportLines: Counter;
}

export function createLoggingMetrics(registry: Registry): LoggingMetrics {
  return {
    storeRequests: counter(registry, {
      name: 'platform_logging_store_requests_total',
      help: 'Calls to the log store by operation (search, scroll, clear_scroll) and outcome (ok, unavailable, timeout, rejected, aborted).',
      labelNames: ['operation', 'outcome'],
    }),
    storeRequestSeconds: histogram(registry, {
      name: 'platform_logging_store_request_duration_seconds',
      help: 'Duration of calls to the log store by operation and outcome.',
      labelNames: ['operation', 'outcome'],
      buckets: UPSTREAM_LATENCY_BUCKETS_SECONDS,
    }),
    exports: counter(registry, {
      name: 'platform_logging_exports_total',
      help: 'Log exports by outcome: completed, capped (hit the line limit), aborted (client went away), failed (store error mid-stream).',
      labelNames: ['outcome'],
    }),
    exportLines: counter(registry, {
      name: 'platform_logging_export_lines_total',
      help: 'Log lines written by exports.',
    }),
  };
}
