/** The kube-apiserver's /version object (k8s.io/apimachinery version.Info), kept as the apiserver sent it. */
export interface KubeVersion {
  major: string;
  minor: string;
  gitVersion: string;
  [field: string]: unknown;
}

export interface KubeVersionCacheOptions {
  /** GET /version from the kube-apiserver with the server's own credentials. */
  fetch: () => Promise<KubeVersion>;
  /** How long a copy is served before it is fetched again (the version changes only with an upgrade). */
  ttlMs: number;
  nowMs?: () => number;
}

/**
 * The kube-apiserver's version object, fetched on first use and again once it is older than the TTL.
 * When a refresh fails the last copy is served (it only changes with an upgrade); without any copy the
 * caller gets the error. Concurrent callers share one fetch.
 */
export class KubeVersionCache {
  readonly #options: KubeVersionCacheOptions;
  readonly #nowMs: () => number;
  #copy: { version: KubeVersion; atMs: number } | undefined;
  #inFlight: Promise<KubeVersion> | undefined;

  constructor(options: KubeVersionCacheOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  get(): Promise<KubeVersion> {
    const copy = this.#copy;
    if (copy && this.#nowMs() - copy.atMs < this.#options.ttlMs) return Promise.resolve(copy.version);
    this.#inFlight ??= this.#options
      .fetch()
      .then((version) => {
        this.#copy = { version, atMs: this.#nowMs() };
        return version;
      })
      .catch((err: unknown) => {
        if (copy) return copy.version;
        throw err;
      })
      .finally(() => (this.#inFlight = undefined));
    return this.#inFlight;
  }
}
