import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from './kube-request.ts';

/**
 * The resources an API group version serves (`/apis/<group>/<version>`), by plural name: what a cache
 * of an optional kind (another system's CRDs, the snapshot API) asks before it watches. A group version
 * the kube-apiserver does not know serves nothing; any other failure is thrown, for the caller to retry.
 */
export async function servedResources(
  kc: KubeConfig,
  groupVersionPath: string,
  timeoutMs = 10_000,
): Promise<Set<string>> {
  try {
    const list = await kubeRequest<{ resources?: { name?: string }[] }>(kc, groupVersionPath, { timeoutMs });
    return new Set((list.resources ?? []).flatMap((r) => (r.name ? [r.name] : [])));
  } catch (err) {
    if (err instanceof KubeRequestError && err.statusCode === 404) return new Set();
    throw err;
  }
}
