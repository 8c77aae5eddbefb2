import type { KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { http1Dispatcher, kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { asApiError } from './member-writes.ts';

/**
 * The kube-apiserver calls of the group writes: reads with the server's credentials (undefined on 404),
 * writes with them or as the caller (impersonated, so Kubernetes RBAC decides), each failure in the API's
 * terms with what was being done.
 */
export class IamKube {
  readonly #kc: KubeConfig;
  readonly #timeoutMs: number;
  #dispatcher: Promise<Dispatcher> | undefined;

  constructor(kubeConfig: KubeConfig, timeoutMs: number) {
    this.#kc = kubeConfig;
    this.#timeoutMs = timeoutMs;
  }

  async get<T>(path: string, doing = 'reading the groups'): Promise<T | undefined> {
    try {
      return await kubeRequest<T>(this.#kc, path, { timeoutMs: this.#timeoutMs });
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return undefined;
      throw asApiError(err, doing);
    }
  }

  async items<T>(path: string): Promise<T[]> {
    return (await this.get<{ items: T[] }>(path))?.items ?? [];
  }

  /** A write; as `caller` when given (impersonated). */
  async write<T>(
    method: 'POST' | 'PUT' | 'DELETE',
    path: string,
    doing: string,
    options: { body?: unknown; caller?: Identity } = {},
  ): Promise<T> {
    try {
      const dispatcher = options.caller ? await this.#impersonating() : undefined;
      return await kubeRequest<T>(this.#kc, path, {
        method,
        ...(options.body === undefined ? {} : { body: options.body }),
        timeoutMs: this.#timeoutMs,
        ...(options.caller ? { impersonate: options.caller } : {}),
        ...(dispatcher ? { dispatcher } : {}),
      });
    } catch (err) {
      throw asApiError(err, doing);
    }
  }

  /** A delete that is done when the object is already gone. */
  async delete(path: string, doing: string, caller?: Identity): Promise<void> {
    try {
      await this.write('DELETE', path, doing, caller ? { caller } : {});
    } catch (err) {
      if (err instanceof ApiError && err.kind === 'NotFound') return;
      throw err;
    }
  }

  /** Impersonated requests go over HTTP/1.1: each impersonated group must be a header line of its own. */
  #impersonating(): Promise<Dispatcher> {
    this.#dispatcher ??= http1Dispatcher(this.#kc).catch((err: unknown) => {
      this.#dispatcher = undefined;
      throw err;
    });
    return this.#dispatcher;
  }
}
