import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';

/**
 * When a namespace was created (Unix seconds), read from the kube-apiserver: the original answers no
 * data for the time before it. A namespace that cannot be read is a 400 carrying the kube-apiserver's
 * message, as the original answers it.
 */
export function namespaceCreation(kc: KubeConfig, timeoutMs: number): (namespace: string) => Promise<number> {
  return async (namespace) => {
    try {
      const ns = await kubeRequest<{ metadata: { creationTimestamp: string } }>(
        kc,
        `/api/v1/namespaces/${encodeURIComponent(namespace)}`,
        { timeoutMs },
      );
      return Math.floor(Date.parse(ns.metadata.creationTimestamp) / 1000);
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusMessage !== undefined)
        throw new ApiError('BadRequest', err.statusMessage);
      throw new ApiError('Unavailable', 'cannot read the namespace from the kube-apiserver', {
        retryAfterSeconds: 1,
      });
    }
  };
}
