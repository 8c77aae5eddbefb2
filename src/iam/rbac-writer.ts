import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { repaired, type RbacObject } from './rbac-translation.ts';

/**
 * The RBAC reconciler's writes, each bounded by a timeout and idempotent: create, or compare with the
 * cached copy and replace it with its resourceVersion (a concurrent change → 409, retried with fresh data).
 */
export class RbacWriter {
  readonly #kc: KubeConfig;
  readonly #timeoutMs: number;

  constructor(kubeConfig: KubeConfig, timeoutMs: number) {
    this.#kc = kubeConfig;
    this.#timeoutMs = timeoutMs;
  }

  /** Makes `current` (the cached copy, if any) what `desired` says; the outcome, for logs and tests. */
  async ensure(
    collection: string,
    desired: RbacObject,
    current: RbacObject | undefined,
  ): Promise<'created' | 'updated' | 'replaced' | 'unchanged'> {
    if (!current) {
      try {
        await this.#send('POST', collection, desired);
        return 'created';
      } catch (err) {
        if (statusOf(err) !== 409) throw err;
      }
      // Made meanwhile (our cache is behind): compare with the stored one.
      current = await this.#send<RbacObject>(
        'GET',
        `${collection}/${encodeURIComponent(desired.metadata.name)}`,
      );
    }
    const next = repaired(current, desired);
    if (next === undefined) return 'unchanged';
    const path = `${collection}/${encodeURIComponent(desired.metadata.name)}`;
    if (next === 'replace') {
      // A binding's roleRef cannot change: delete (only that version) and make it again.
      await this.#delete(path, current.metadata.resourceVersion);
      await this.#send('POST', collection, desired);
      return 'replaced';
    }
    await this.#send('PUT', path, next);
    return 'updated';
  }

  /** Replaces an object (one of the platform's roles, with its resourceVersion). */
  async replace(path: string, object: RbacObject): Promise<void> {
    await this.#send('PUT', path, object);
  }

  /** Deletes the object at `path` (only that version when given); false when it was gone. */
  async delete(path: string, resourceVersion?: string): Promise<boolean> {
    return this.#delete(path, resourceVersion);
  }

  async #delete(path: string, resourceVersion?: string): Promise<boolean> {
    try {
      await this.#send('DELETE', path, resourceVersion ? { preconditions: { resourceVersion } } : undefined);
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      throw err;
    }
  }

  #send<T = unknown>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    return kubeRequest<T>(this.#kc, path, {
      method,
      ...(body === undefined ? {} : { body }),
      timeoutMs: this.#timeoutMs,
    });
  }
}

export function statusOf(err: unknown): number | undefined {
  return err instanceof KubeRequestError ? err.statusCode : undefined;
}
