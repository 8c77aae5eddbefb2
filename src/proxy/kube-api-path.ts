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
