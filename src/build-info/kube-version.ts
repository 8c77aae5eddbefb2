import type { KubeConfig } from '@kubernetes/client-node';
import { KubeVersionCache, type KubeVersion } from '../cluster/kube-version.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';

export type { KubeVersion } from '../cluster/kube-version.ts';

export interface KubeVersionOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** How long an answer is reused: the endpoint is anonymous, so callers must not drive apiserver load. */
  ttlMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

/**
 * The kube-apiserver's version for `/kapis/version`, asked with the server's own credentials. The system we
 * re-create asks on every call; here the shared cache reuses an answer for a few seconds and concurrent
 * callers share one request. Without any answer the field is left out (as there) and the failure logged.
 */
export class KubeVersionSource {
  readonly #cache: KubeVersionCache;
  readonly #logger: Logger;

  constructor(options: KubeVersionOptions) {
    const timeoutMs = options.timeoutMs ?? 5000;
    this.#logger = options.logger;
    this.#cache = new KubeVersionCache({
      fetch: () => kubeRequest<KubeVersion>(options.kubeConfig, '/version', { timeoutMs }),
      ttlMs: options.ttlMs ?? 10_000,
      ...(options.now ? { nowMs: options.now } : {}),
    });
  }

  get(): Promise<KubeVersion | undefined> {
    return this.#cache.get().catch((err: unknown) => {
      this.#logger.warn('cannot read the kube-apiserver version', { error: String(err) });
      return undefined;
    });
  }
}
