import type { Registry } from 'prom-client';
import { METRIC_PREFIX, UPSTREAM_LATENCY_BUCKETS_SECONDS } from './metrics.ts';
import { seriesHistogram, type SeriesHistogram } from './series-metrics.ts';

/** Who sent a request to the kube-apiserver: our own client calls (caches, reviews, sessions) or the proxy. */
export type UpstreamSource = 'client' | 'proxy';

export type UpstreamLabel = 'source' | 'verb' | 'code';

/**
 * Latency of requests to the kube-apiserver, shared by the client instrumentation and the proxy
 * (both call this with the same registry and get the same histogram). `verb` is a RequestVerb
 * (requestVerb()), `code` the upstream status code or `error` when no response came.
 * Watches are measured to their response headers, everything else to the end of the body.
 */
export function upstreamRequestDuration(registry: Registry): SeriesHistogram<UpstreamLabel> {
  return seriesHistogram(registry, {
    name: `${METRIC_PREFIX}upstream_request_duration_seconds`,
    help: 'Requests to the kube-apiserver by source (client, proxy), verb and status code; watches until their response headers.',
    labelNames: ['source', 'verb', 'code'],
    buckets: UPSTREAM_LATENCY_BUCKETS_SECONDS,
  });
}
