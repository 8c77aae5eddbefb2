import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';

/** What the tenant reconciler reads and writes of any object. */
export interface ClusterObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    ownerReferences?: { apiVersion?: string; kind?: string; name?: string; uid?: string }[];
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** How `ensure` went. `not-installed`: the kube-apiserver does not serve that resource (no CRD). */
export type EnsureOutcome = 'created' | 'updated' | 'unchanged' | 'not-installed' | 'exists';

/** A metadata change to apply with a JSON merge patch (null removes a label or annotation). */
export interface MetadataPatch {
  labels?: Record<string, string | null>;
  finalizers?: string[];
  ownerReferences?: ClusterObject['metadata']['ownerReferences'];
}

/**
 * The reconciler's writes, each bounded by a timeout. Updates always carry the resourceVersion they
 * were computed from, so a concurrent change fails them with 409 (the work queue retries with fresh data)
 * instead of being overwritten.
 */
export class ClusterWriter {
  readonly #kc: KubeConfig;
  readonly #timeoutMs: number;
  /** Path → the resourceVersion our last update of that object was made from. */
  readonly #updatedFrom = new Map<string, string>();

  constructor(kubeConfig: KubeConfig, timeoutMs: number) {
    this.#kc = kubeConfig;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * True while a cached copy is still the version our last update of that object replaced: the watch
   * event of our write is on its way (and will queue the object again). Acting on the stale copy would
   * only fail with a conflict.
   */
  behind(path: string, cached: ClusterObject): boolean {
    const from = this.#updatedFrom.get(path);
    if (from === undefined) return false;
    if (from === cached.metadata.resourceVersion) return true;
    this.#updatedFrom.delete(path);
    return false;
  }

  #updated(path: string, from: ClusterObject): void {
    // Entries go when the cache shows a newer version; a bound keeps those of deleted objects from piling up.
    if (this.#updatedFrom.size >= 10_000) this.#updatedFrom.clear();
    if (from.metadata.resourceVersion) this.#updatedFrom.set(path, from.metadata.resourceVersion);
  }

  /** The object, or undefined when it (or its resource) does not exist. */
  async get<T extends ClusterObject>(path: string): Promise<T | undefined> {
    try {
      return await kubeRequest<T>(this.#kc, path, { timeoutMs: this.#timeoutMs });
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** The objects of a collection matching a label selector; none when the resource is not served. */
  async list<T extends ClusterObject>(collection: string, labelSelector: string): Promise<T[]> {
    try {
      const query = `?labelSelector=${encodeURIComponent(labelSelector)}`;
      return (await kubeRequest<{ items: T[] }>(this.#kc, collection + query, { timeoutMs: this.#timeoutMs }))
        .items;
    } catch (err) {
      if (statusOf(err) === 404) return [];
      throw err;
    }
  }

  /**
   * Creates `desired` in `collection` unless it exists; when it does (in `current`, or found on a 409),
   * applies `update` to it and replaces it if that returns a changed object. `update` undefined: an
   * existing object is left as it is.
   */
  async ensure<T extends ClusterObject>(options: {
    collection: string;
    desired: T;
    current?: T | undefined;
    update?: (current: T) => T | undefined;
  }): Promise<EnsureOutcome> {
    const { collection, desired, update } = options;
    const path = `${collection}/${encodeURIComponent(desired.metadata.name)}`;
    let current = options.current;
    if (!current) {
      try {
        await kubeRequest(this.#kc, collection, {
          method: 'POST',
          body: desired,
          timeoutMs: this.#timeoutMs,
        });
        return 'created';
      } catch (err) {
        if (statusOf(err) === 404) return 'not-installed';
        if (statusOf(err) !== 409) throw err;
      }
      if (!update) return 'exists';
      current = await this.get<T>(path);
      if (!current) throw new Error(`${path} existed and is gone: trying again`);
    }
    if (this.behind(path, current)) return 'unchanged';
    const next = update?.(current);
    if (!next) return 'unchanged';
    await kubeRequest(this.#kc, path, { method: 'PUT', body: next, timeoutMs: this.#timeoutMs });
    this.#updated(path, current);
    return 'updated';
  }

  /** Changes metadata of the object at `path` if it is still at `current`'s resourceVersion. */
  async patchMetadata(path: string, current: ClusterObject, patch: MetadataPatch): Promise<void> {
    await kubeRequest(this.#kc, path, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { metadata: { ...patch, resourceVersion: current.metadata.resourceVersion } },
      timeoutMs: this.#timeoutMs,
    });
    this.#updated(path, current);
  }

  /** Deletes; false when it did not exist. */
  async delete(path: string): Promise<boolean> {
    try {
      await kubeRequest(this.#kc, path, { method: 'DELETE', timeoutMs: this.#timeoutMs });
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
  }
}

export function statusOf(err: unknown): number | undefined {
  return err instanceof KubeRequestError ? err.statusCode : undefined;
}
