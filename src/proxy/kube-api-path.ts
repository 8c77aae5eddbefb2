/**
 * What a Kubernetes API path asks for, enough to label metrics with a bounded verb and to refuse paths
 * that would leave the Kubernetes API on the upstream server.
 */
export type KubeVerb =
  | 'get'
  | 'list'
  | 'watch'
  | 'create'
  | 'update'
  | 'patch'
  | 'delete'
  | 'deletecollection'
  | 'options'
  | 'other';

export interface KubeRequest {
  verb: KubeVerb;
  /** '' for the core group. */
  group: string;
  resource?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export class UnsafePathError extends Error {}

/**
 * Splits the raw path (no query) into decoded segments, refusing anything that a server could resolve
 * to another path: `.`/`..` segments (also percent-encoded), encoded slashes or backslashes, empty
 * segments, control characters. The path must stay under /api or /apis.
 */
export function safeKubeSegments(rawPath: string): string[] {
  if (!rawPath.startsWith('/')) throw new UnsafePathError('path must be absolute');
  const raw = rawPath.slice(1).split('/');
  if (raw.length > 1 && raw[raw.length - 1] === '') raw.pop(); // a single trailing slash is harmless
  const segments = raw.map((segment) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw new UnsafePathError('path contains malformed percent-encoding');
    }
    if (decoded === '' || decoded === '.' || decoded === '..')
      throw new UnsafePathError('path contains an empty, "." or ".." segment');
    if (/[/\\]/.test(decoded)) throw new UnsafePathError('path contains an encoded slash or a backslash');
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(decoded)) throw new UnsafePathError('path contains control characters');
    return decoded;
  });
  if (segments[0] !== 'api' && segments[0] !== 'apis')
    throw new UnsafePathError('only /api and /apis paths are proxied');
  return segments;
}

/** Classifies a request the way the kube-apiserver's RequestInfo does, for the common shapes. */
export function describeKubeRequest(method: string, segments: string[], query: URLSearchParams): KubeRequest {
  const isWatch = query.get('watch') === 'true' || query.get('watch') === '1';
  // /api/v1/... has the group '' ; /apis/<group>/<version>/...
  const group = segments[0] === 'apis' ? (segments[1] ?? '') : '';
  const rest = segments.slice(segments[0] === 'apis' ? 3 : 2);
  let namespace: string | undefined;
  let parts = rest;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    parts = rest.slice(2);
  }
  const [resource, name, subresource] = parts;
  const request: KubeRequest = { verb: verbOf(method, name !== undefined, isWatch), group };
  if (resource !== undefined) request.resource = resource;
  if (namespace !== undefined) request.namespace = namespace;
  if (name !== undefined) request.name = name;
  if (subresource !== undefined) request.subresource = subresource;
  return request;
}

function verbOf(method: string, named: boolean, isWatch: boolean): KubeVerb {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return isWatch ? 'watch' : named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    case 'OPTIONS':
      return 'options';
    default:
      return 'other';
  }
}
