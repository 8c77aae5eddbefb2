/**
 * What a Kubernetes-style API path (/api, /apis, /kapis) addresses, in the spirit of the
 * kube-apiserver's RequestInfo: enough to label metrics with a verb and a group/version/resource.
 * Pure functions of their input; the results form small closed sets when given route templates.
 */

export interface ApiPathInfo {
  group: string;
  version: string;
  resource: string;
  /** An object name (or a route parameter standing for one) follows the resource. */
  named: boolean;
  /** Something follows the name: a subresource such as status, log, exec or proxy. */
  subresource: boolean;
  /** A legacy watch path: /api/v1/watch/…, /apis/{group}/{version}/watch/…. */
  watchPath: boolean;
}

/** Uppercase, as the kube-apiserver's own request metrics spell them. */
export type RequestVerb =
  | 'GET'
  | 'LIST'
  | 'WATCH'
  | 'POST'
  | 'PUT'
  | 'PATCH'
  | 'DELETE'
  | 'DELETECOLLECTION'
  | 'HEAD'
  | 'OPTIONS'
  | 'CONNECT'
  | 'OTHER';

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const PLAIN_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'CONNECT']);

/** A route parameter or wildcard (express `:name`, `*splat`; OpenAPI `{name}`), not a literal segment. */
function isVariable(segment: string): boolean {
  return segment.startsWith(':') || segment.startsWith('*') || segment.startsWith('{');
}

/**
 * Parses /api/{version}/…, /apis/{group}/{version}/… and /kapis/{group}/{version}/…, with an optional
 * namespaces/{namespace}/ scope. Returns undefined for other paths and for discovery documents.
 */
export function parseApiPath(path: string): ApiPathInfo | undefined {
  const parts = path.split('/').filter((p) => p !== '');
  const prefix = parts.shift();
  let group: string;
  if (prefix === 'api') group = '';
  else if (prefix === 'apis' || prefix === 'kapis') group = parts.shift() ?? '';
  else return undefined;
  const version = parts.shift();
  if (version === undefined) return undefined;
  // Legacy watch paths: /api/v1/watch/namespaces/x/pods.
  const watchPath = parts[0] === 'watch';
  if (watchPath) parts.shift();
  // namespaces/{ns}/{resource}… is namespace-scoped; namespaces[/{name}[/status|/finalize]] address
  // namespaces themselves (as the kube-apiserver's RequestInfo decides).
  if (
    parts[0] === 'namespaces' &&
    parts.length >= 3 &&
    !(parts.length === 3 && NAMESPACE_SUBRESOURCES.has(parts[2]!))
  ) {
    parts.splice(0, 2);
  }
  const resource = parts[0];
  if (resource === undefined) return undefined;
  return {
    group: isVariable(group) ? '' : group,
    version: isVariable(version) ? '' : version,
    resource: isVariable(resource) ? '' : resource,
    named: parts.length >= 2,
    subresource: parts.length >= 3,
    watchPath,
  };
}

/**
 * The verb of a request: a Kubernetes verb for API paths (GET of a collection is LIST, with ?watch
 * WATCH), else the HTTP method. Always one of a closed set, whatever the client sends.
 */
export function requestVerb(method: string, path: string, watch: boolean): RequestVerb {
  return verbOf(method, parseApiPath(path), watch);
}

/** requestVerb() for a path already parsed by parseApiPath(). */
export function verbOf(method: string, info: ApiPathInfo | undefined, watch: boolean): RequestVerb {
  const m = method.toUpperCase();
  if (!PLAIN_METHODS.has(m)) return 'OTHER';
  if (!info) return m as RequestVerb;
  if (m === 'GET') {
    if (watch || info.watchPath) return 'WATCH';
    return info.named ? 'GET' : 'LIST';
  }
  if (m === 'DELETE' && !info.named) return 'DELETECOLLECTION';
  return m as RequestVerb;
}

/**
 * False when the request target (from `from` on) cannot name `watch`, even percent-encoded: its query need
 * not be parsed. Most requests' cannot, and parsing a query costs more than these two scans.
 */
export function mayNameWatch(target: string, from = 0): boolean {
  return target.includes('watch', from) || target.includes('%', from);
}

/** `?watch=true` / `?watch=1` as the kube-apiserver reads it. */
export function isWatchQuery(value: unknown): boolean {
  return value === 'true' || value === '1';
}
