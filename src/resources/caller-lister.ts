import type { KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { http1Dispatcher, KubeRequestError, kubeRequest } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import type { KubeList, KubeObject } from './kube-object.ts';
import { collectionPath, type ResourceKind } from './kinds.ts';

/** Selectors the kube-apiserver applies itself. */
export interface Pushdown {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface CallerListerOptions {
  kubeConfig: KubeConfig;
  /** Objects per request of a paged list: bounds what one answer holds in memory. */
  chunkSize?: number;
  timeoutMs?: number;
}

/**
 * Reads from the kube-apiserver as the caller (impersonated: the server's own identity only needs
 * `impersonate`), so Kubernetes RBAC decides what each caller may read and this server holds no
 * broader read rights than it already has. Lists are read in chunks (`limit` + `continue`).
 */
export class CallerLister {
  readonly #kubeConfig: KubeConfig;
  readonly #chunkSize: number;
  readonly #timeoutMs: number;
  #dispatcher: Promise<Dispatcher> | undefined;

  constructor(options: CallerListerOptions) {
    this.#kubeConfig = options.kubeConfig;
    this.#chunkSize = options.chunkSize ?? 500;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Every object of the collection that passes the pushdown, chunk by chunk. Resolves to the list's resourceVersion. */
  /** Closes its connections. */
  async close(): Promise<void> {
    const dispatcher = this.#dispatcher;
    this.#dispatcher = undefined;
    if (dispatcher) await (await dispatcher).close();
  }

  async list(
    identity: Identity,
    kind: ResourceKind,
    namespace: string | undefined,
    pushdown: Pushdown,
    onChunk: (items: KubeObject[]) => void,
  ): Promise<string> {
    const base = collectionPath(kind, namespace);
    let next: string | undefined;
    let resourceVersion = '';
    do {
      const params = new URLSearchParams({ limit: String(this.#chunkSize) });
      if (pushdown.labelSelector) params.set('labelSelector', pushdown.labelSelector);
      if (pushdown.fieldSelector) params.set('fieldSelector', pushdown.fieldSelector);
      if (next) params.set('continue', next);
      const page = await this.#request<KubeList>(identity, `${base}?${params}`, kind, undefined);
      if (!resourceVersion) resourceVersion = page.metadata?.resourceVersion ?? '';
      onChunk(page.items ?? []);
      next = page.metadata?.continue || undefined;
    } while (next);
    return resourceVersion;
  }

  /**
   * How many objects the collection holds, without reading them: a one-item page says how many remain.
   * Where the kube-apiserver does not say (it may not for every list), the objects are counted.
   */
  async count(identity: Identity, kind: ResourceKind, namespace: string | undefined): Promise<number> {
    const page = await this.#request<KubeList & { metadata?: { remainingItemCount?: number } }>(
      identity,
      `${collectionPath(kind, namespace)}?limit=1`,
      kind,
      undefined,
    );
    const remaining = page.metadata?.remainingItemCount;
    if (!page.metadata?.continue) return page.items?.length ?? 0;
    if (typeof remaining === 'number') return (page.items?.length ?? 0) + remaining;
    let total = 0;
    await this.list(identity, kind, namespace, {}, (items) => (total += items.length));
    return total;
  }

  /**
   * One object. `fromWatchCache`: served by the kube-apiserver's watch cache (`resourceVersion=0`), no
   * etcd read — as current as that cache, which is what the pod index follows too.
   */
  get(
    identity: Identity,
    kind: ResourceKind,
    namespace: string | undefined,
    name: string,
    options: { fromWatchCache?: boolean } = {},
  ): Promise<KubeObject> {
    const path =
      `${collectionPath(kind, namespace)}/${encodeURIComponent(name)}` +
      (options.fromWatchCache ? '?resourceVersion=0' : '');
    return this.#request<KubeObject>(identity, path, kind, name);
  }

  async #request<T>(
    identity: Identity,
    path: string,
    kind: ResourceKind,
    name: string | undefined,
  ): Promise<T> {
    try {
      this.#dispatcher ??= http1Dispatcher(this.#kubeConfig).catch((err: unknown) => {
        this.#dispatcher = undefined;
        throw err;
      });
      return await kubeRequest<T>(this.#kubeConfig, path, {
        timeoutMs: this.#timeoutMs,
        impersonate: identity,
        dispatcher: await this.#dispatcher,
      });
    } catch (err) {
      throw asApiError(err, kind, name);
    }
  }
}

/** The kube-apiserver's refusal in our terms; its own message where it is the caller's business. */
function asApiError(err: unknown, kind: ResourceKind, name: string | undefined): ApiError {
  if (!(err instanceof KubeRequestError)) {
    return new ApiError('Unavailable', `the kube-apiserver could not be reached to read ${kind.resource}`, {
      retryAfterSeconds: 1,
    });
  }
  const message = err.statusMessage ?? `${kind.resource}: HTTP ${err.statusCode}`;
  const details = {
    kind: kind.resource,
    ...(kind.group ? { group: kind.group } : {}),
    ...(name ? { name } : {}),
  };
  switch (err.statusCode) {
    case 400:
      // Only the field selector is passed on unparsed (secrets): it is what the kube-apiserver refused.
      return new ApiError('BadRequest', `invalid value for query parameter "fieldSelector": ${message}`, {
        details: { causes: [{ reason: 'FieldValueInvalid', message, field: 'fieldSelector' }] },
      });
    case 403:
      return new ApiError('Forbidden', message, { details });
    case 404:
      return new ApiError('NotFound', name ? `${kind.resource} "${name}" not found` : message, { details });
    case 410:
      return new ApiError('Unavailable', 'the list changed too much while it was read; ask again', {
        retryAfterSeconds: 1,
      });
    default:
      return new ApiError(
        'Unavailable',
        `the kube-apiserver answered ${err.statusCode} reading ${kind.resource}`,
        {
          retryAfterSeconds: 1,
        },
      );
  }
}
