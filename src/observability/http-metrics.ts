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

interface RouteSeries {
  requests: CounterSeries;
  duration: HistogramSeries;
}

/** The last request finished on a route: its path's parse, and the series its method, code and watch chose. */
interface LastRequest {
  path: string;
  info: ApiPathInfo | undefined;
  method?: string;
  statusCode?: number | undefined;
  watch?: unknown;
  series?: RouteSeries;
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
  const seen = new Map<string, RouteSeries>();
  // The verb needs the path parsed. A route's requests mostly repeat one request (a list, a probe), so the
  // last one seen on each route is kept with its parse and its series: a repeat finds them by comparison.
  const lastOnRoute = new Map<string, LastRequest>();
  return {
    observe(request) {
      let last = lastOnRoute.get(request.route);
      if (last?.path !== request.path) {
        last = { path: request.path, info: parseApiPath(request.path) };
        lastOnRoute.set(request.route, last);
      }
      let series = last.series;
      if (
        series === undefined ||
        last.method !== request.method ||
        last.statusCode !== request.statusCode ||
        last.watch !== request.watch
      ) {
        const verb = verbOf(request.method, last.info, isWatchQuery(request.watch));
        const key = `${verb} ${request.statusCode ?? 'aborted'} ${request.route}`;
        series = seen.get(key);
        if (!series) {
          const labels = httpRequestLabels(request);
          series = { requests: requests.series(labels), duration: duration.series(labels) };
          seen.set(key, series);
        }
        last.method = request.method;
        last.statusCode = request.statusCode;
        last.watch = request.watch;
        last.series = series;
      }
      series.requests.inc();
      series.duration.observe(request.durationSeconds);
    },
  };
}
