import type { KubeConfig } from '@kubernetes/client-node';
import { getGlobalDispatcher, type Dispatcher } from 'undici';
import { isWatchQuery, requestVerb } from '../observability/api-request-info.ts';
import type { SeriesHistogram } from '../observability/series-metrics.ts';
import type { UpstreamLabel } from '../observability/upstream-metrics.ts';

/**
 * Measures every request sent with this KubeConfig: API clients made by kc.makeApiClient(), the caches'
 * watches (kubeWatch) and kubeRequest. All of them ask the KubeConfig for an undici dispatcher per
 * request (applySecurityAuthentication); we compose a timing interceptor onto it. The instance is
 * wrapped rather than subclassed because loaders (in-cluster, file) build it.
 */
export function instrumentKubeConfig(kc: KubeConfig, duration: SeriesHistogram<UpstreamLabel>): void {
  const applyAuthentication = kc.applySecurityAuthentication.bind(kc);
  const interceptor = timingInterceptor(duration);
  kc.applySecurityAuthentication = async (context) => {
    await applyAuthentication(context);
    context.setDispatcher((context.getDispatcher() ?? getGlobalDispatcher()).compose(interceptor));
  };
}

export function timingInterceptor(
  duration: SeriesHistogram<UpstreamLabel>,
): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => {
    const url = new URL(options.path, 'http://upstream');
    const watch = isWatchQuery(url.searchParams.get('watch'));
    const verb = requestVerb(options.method, url.pathname, watch);
    const startedAt = process.hrtime.bigint();
    let observed = false;
    const observe = (code: string) => {
      if (observed) return;
      observed = true;
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      duration.series({ source: 'client', verb, code }).observe(seconds);
    };
    let statusCode = 0;
    const timed: Dispatcher.DispatchHandler = {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onRequestUpgrade: (controller, code, headers, socket) => {
        observe(String(code));
        handler.onRequestUpgrade?.(controller, code, headers, socket);
      },
      onResponseStart: (controller, code, headers, statusMessage) => {
        if (code >= 200) statusCode = code;
        // A watch stays open for minutes: its latency is the time to the response headers.
        if (watch && code >= 200) observe(String(code));
        handler.onResponseStart?.(controller, code, headers, statusMessage);
      },
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => {
        observe(String(statusCode));
        handler.onResponseEnd?.(controller, trailers);
      },
      onResponseError: (controller, error) => {
        observe(statusCode ? String(statusCode) : 'error');
        handler.onResponseError?.(controller, error);
      },
    };
    return dispatch(options, timed);
  };
}
