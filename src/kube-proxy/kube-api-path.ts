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
 * segments, control characters. The path must stay under /api, /apis or the cluster's /openapi/v2|v3.
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
  const kubernetesApi =
    segments[0] === 'api' ||
    segments[0] === 'apis' ||
    // The cluster's OpenAPI documents, which kubectl apply/explain read (/openapi/v2, /openapi/v3[/…]).
    (segments[0] === 'openapi' && (segments[1] === 'v2' || segments[1] === 'v3'));
  if (!kubernetesApi) throw new UnsafePathError('only /api, /apis and /openapi/v2|v3 paths are proxied');
  return segments;
}
