import { VersionApi, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../observability/logger.ts';

/**
 * Retries GET /version until the kube-apiserver answers once, with capped exponential back-off.
 * Readiness waits for this; later outages do not flip it back, because the server keeps serving
 * cached state while the apiserver is away.
 */
export class FirstContact {
  #reached = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #kubernetesVersion: string | undefined;

  readonly kc: KubeConfig;
  readonly logger: Logger;

  constructor(kc: KubeConfig, logger: Logger) {
    this.kc = kc;
    this.logger = logger;
  }

  get reached(): boolean {
    return this.#reached;
  }

  get kubernetesVersion(): string | undefined {
    return this.#kubernetesVersion;
  }

  start(attempt = 0): void {
    if (this.#stopped) return;
    this.kc
      .makeApiClient(VersionApi)
      .getCode()
      .then((info) => {
        this.#reached = true;
        this.#kubernetesVersion = info.gitVersion;
        this.logger.info('kube-apiserver reached', {
          server: this.kc.getCurrentCluster()?.server,
          version: info.gitVersion,
        });
      })
      .catch((err: unknown) => {
        const delayMs = Math.min(30_000, 500 * 2 ** attempt) * (0.5 + Math.random() / 2);
        this.logger.warn('kube-apiserver not reachable yet', {
          error: (err as Error).message,
          retryInMs: Math.round(delayMs),
        });
        this.#timer = setTimeout(() => this.start(attempt + 1), delayMs);
        this.#timer.unref();
      });
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}
