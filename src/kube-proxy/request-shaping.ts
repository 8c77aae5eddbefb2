import type http from 'node:http';
import { ApiError } from '../kernel/api-error.ts';
import {
  isWatchQuery,
  mayNameWatch,
  parseApiPath,
  verbOf,
  type RequestVerb,
} from '../observability/api-request-info.ts';
import { safeKubeSegments, UnsafePathError } from './kube-api-path.ts';

/**
 * True for the paths the proxy owns: /api, /apis and the cluster's OpenAPI documents /openapi/v2 and
 * /openapi/v3 (this server's own document is /openapi/platform/v3).
 */
export function isKubeApiPath(path: string): boolean {
  return (
    path === '/api' ||
    path === '/apis' ||
    path.startsWith('/api/') ||
    path.startsWith('/apis/') ||
    path === '/openapi/v2' ||
    path === '/openapi/v3' ||
    path.startsWith('/openapi/v3/')
  );
}

/** What logs and HTTP metrics show for a proxied path: a template, never the client-chosen path. */
export function routeTemplateOf(path: string): string {
  return path.startsWith('/apis') ? '/apis/*' : path.startsWith('/openapi') ? '/openapi/*' : '/api/*';
}

export interface RequestShape {
  /** For metrics. */
  verb: RequestVerb;
  /**
   * The answer is one object or one list, never a stream: LIST, and GET of an object itself. A watch
   * and subresources such as log (follow=true) or proxy may stream for as long as they like.
   */
  oneObjectOrList: boolean;
}

/**
 * Checks that a request stays inside the Kubernetes API and names its verb. Throws a BadRequest
 * ApiError for a path that could resolve elsewhere upstream.
 */
export function shapeRequest(req: http.IncomingMessage): RequestShape {
  const target = req.url ?? '/';
  const queryAt = target.indexOf('?');
  const rawPath = queryAt < 0 ? target : target.slice(0, queryAt);
  try {
    safeKubeSegments(rawPath);
  } catch (err) {
    if (err instanceof UnsafePathError)
      throw new ApiError('BadRequest', `invalid Kubernetes API path: ${err.message}`);
    throw err;
  }
  const info = parseApiPath(rawPath);
  const watch =
    queryAt >= 0 &&
    mayNameWatch(target, queryAt) &&
    isWatchQuery(new URL(target, 'http://placeholder').searchParams.get('watch'));
  const verb = verbOf(req.method ?? 'GET', info, watch);
  const oneObjectOrList = verb === 'LIST' || (verb === 'GET' && info?.subresource === false);
  return { verb, oneObjectOrList };
}

/** The error a failed connection to the kube-apiserver stands for. */
export function upstreamFailure(err: NodeJS.ErrnoException, responseTimeoutMs: number): ApiError {
  switch (err.code) {
    case 'UPSTREAM_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return new ApiError(
        'GatewayTimeout',
        `the kube-apiserver did not answer within ${responseTimeoutMs} ms`,
      );
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new ApiError('Unavailable', 'the kube-apiserver is unreachable');
    default:
      return new ApiError('BadGateway', 'the connection to the kube-apiserver failed');
  }
}
