import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';

/** How long a namespace's creation time is reused: it never changes, but a namespace can be recreated. */
const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

/**
 * When a namespace was created (Unix seconds), read from the kube-apiserver and kept for a short while
 * (every request of a project's page asks): the original answers no data for the time before it. A
 * namespace that cannot be read is a 400 carrying the kube-apiserver's message, as the original answers it.
 */
export function namespaceCreation(kc: KubeConfig, timeoutMs: number): (namespace: string) => Promise<number> {
  const known = new Map<string, { created: number; until: number }>();
  return async (namespace) => {
    const held = known.get(namespace);
    if (held && held.until > Date.now()) return held.created;
    let created: number;
    try {
      const ns = await kubeRequest<{ metadata: { creationTimestamp: string } }>(
        kc,
        `/api/v1/namespaces/${encodeURIComponent(namespace)}`,
        { timeoutMs },
      );
      created = Math.floor(Date.parse(ns.metadata.creationTimestamp) / 1000);
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusMessage !== undefined)
        throw new ApiError('BadRequest', err.statusMessage);
      throw new ApiError('Unavailable', 'cannot read the namespace from the kube-apiserver', {
        retryAfterSeconds: 1,
      });
    }
    if (known.size >= MAX_ENTRIES) known.clear();
    known.set(namespace, { created, until: Date.now() + TTL_MS });
    return created;
  };
}
