import type { Registry } from 'prom-client';
import { type ApiPathInfo, isWatchQuery, parseApiPath, requestVerb, verbOf } from './api-request-info.ts';
import { SERVER_LATENCY_BUCKETS_SECONDS, METRIC_PREFIX } from './metrics.ts';
import {
  seriesCounter,
  seriesHistogram,
  type CounterSeries,
  type HistogramSeries,
} from './series-metrics.ts';

/** One finished request as the HTTP layer saw it. */
export interface FinishedRequest {
  method: string;
  /** The request path without query; used only to tell LIST from GET, never as a label. */
  path: string;
  /** Value of the `watch` query parameter, if any. */
  watch: unknown;
  /** Route template (routeTemplate()); the only source of group/version/resource labels. */
  route: string;
  /** Status code sent, or undefined when the client went away before a response started. */
  statusCode: number | undefined;
  durationSeconds: number;
}

type HttpLabel = 'verb' | 'group' | 'version' | 'resource' | 'route' | 'code';

/**
 * Labels of a finished request. Every value comes from a closed set or from the route template, so
 * the number of series stays bounded whatever paths, names or query strings clients send.
 */
export function httpRequestLabels(r: FinishedRequest): Record<HttpLabel, string> {
  const api = parseApiPath(r.route);
  return {
    verb: requestVerb(r.method, r.path, isWatchQuery(r.watch)),
    group: api?.group ?? '',
    version: api?.version ?? '',
    resource: api?.resource ?? '',
    route: r.route,
    code: r.statusCode === undefined ? 'aborted' : String(r.statusCode),
  };
}

export interface HttpMetrics {
  observe(request: FinishedRequest): void;
}

/** Request count and latency of this server's own HTTP interface. */
export function createHttpMetrics(registry: Registry): HttpMetrics {
  const labelNames: HttpLabel[] = ['verb', 'group', 'version', 'resource', 'route', 'code'];
  const requests = seriesCounter(registry, {
    name: `${METRIC_PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by verb, API group, version, resource, route template and status code.',
    labelNames,
  });
  const duration = seriesHistogram(registry, {
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: 'Time from request arrival to the end of the response (for watches: to the end of the stream).',
    labelNames,
    buckets: SERVER_LATENCY_BUCKETS_SECONDS,
  });
  // Verb, code and route decide every label: a request finds its series without building them.
  const seen = new Map<string, { requests: CounterSeries; duration: HistogramSeries }>();
  // The verb needs the path parsed. A route's requests mostly repeat one path (a list, a probe), so the
  // parse of the last path seen on each route is kept.
  const lastPaths = new Map<string, { path: string; info: ApiPathInfo | undefined }>();
  return {
    observe(request) {
      let last = lastPaths.get(request.route);
      if (last?.path !== request.path) {
        last = { path: request.path, info: parseApiPath(request.path) };
        lastPaths.set(request.route, last);
      }
      const verb = verbOf(request.method, last.info, isWatchQuery(request.watch));
      const key = `${verb} ${request.statusCode ?? 'aborted'} ${request.route}`;
      let series = seen.get(key);
      if (!series) {
        const labels = httpRequestLabels(request);
        series = { requests: requests.series(labels), duration: duration.series(labels) };
        seen.set(key, series);
      }
      series.requests.inc();
      series.duration.observe(request.durationSeconds);
    },
  };
}
