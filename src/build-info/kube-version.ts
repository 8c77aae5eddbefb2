import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';

/** The kube-apiserver's `/version` object, passed through as it is. */
export type KubeVersion = Readonly<Record<string, unknown>>;

export interface KubeVersionOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** How long an answer is reused: the endpoint is anonymous, so callers must not drive apiserver load. */
  ttlMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

/**
 * The kube-apiserver's version, asked with the server's own credentials. The system we re-create asks
 * on every call; here an answer is reused for a few seconds and concurrent callers share one request.
 * A failure yields undefined (the field is then left out, as there) and is logged.
 */
export class KubeVersionSource {
  readonly #options: KubeVersionOptions;
  readonly #now: () => number;
  #cached: { at: number; version: KubeVersion } | undefined;
  #inFlight: Promise<KubeVersion | undefined> | undefined;

  constructor(options: KubeVersionOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  get(): Promise<KubeVersion | undefined> {
    const ttlMs = this.#options.ttlMs ?? 10_000;
    if (this.#cached && this.#now() - this.#cached.at < ttlMs) return Promise.resolve(this.#cached.version);
    this.#inFlight ??= kubeRequest<KubeVersion>(this.#options.kubeConfig, '/version', {
      timeoutMs: this.#options.timeoutMs ?? 5000,
    })
      .then(
        (version) => {
          this.#cached = { at: this.#now(), version };
          return version;
        },
        (err: unknown) => {
          this.#options.logger.warn('cannot read the kube-apiserver version', { error: String(err) });
          return undefined;
        },
      )
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }
}
