import type { KubernetesObject } from '@kubernetes/client-node';
import { Informer, kubeWatch, type ListResult } from '../cluster/informer.ts';
import {
  KubeRequestError,
  kubeRequest,
  type KubeCredentials,
  type KubeRequestOptions,
} from '../cluster/kube-request.ts';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import type { Logger } from '../observability/logger.ts';
import type { IamGroup } from './iam-resources.ts';

export type IamPlural = 'users' | 'sessions' | 'loginthrottles' | 'loginrecords';

/**
 * A bound on every round trip of this module. The writes sit on the login path: a kube-apiserver that
 * stopped answering must fail the login (a 503), not hold it open.
 */
const REQUEST_TIMEOUT_MS = 10_000;
/** An informer's first list holds every object of a kind (thousands of users): it gets longer. */
const LIST_TIMEOUT_MS = 60_000;

/**
 * On every write: the kube-apiserver otherwise decodes each body a second time, strictly, to warn of
 * unknown and duplicate fields (its default, `Warn`). Our bodies are built from the schemas we install,
 * and no one reads the warnings; the second decode was CPU on the login path (its session's write and its
 * ledger's).
 */
const WRITE_QUERY = '?fieldValidation=Ignore';

/** Another writer changed the object since we read it (HTTP 409 on a resourceVersion precondition). */
export class ConflictError extends Error {}

/**
 * The kube-apiserver refused a request of this module. It carries the code as `code`, as the generated
 * client's ApiException does, and not as `statusCode`: the error mapper must not pass the kube-apiserver's
 * 4xx on to our caller as if it were theirs (a caller's mistake is named where it is made).
 */
export class IamRequestError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = 'IamRequestError';
    this.code = code;
  }
}

/**
 * Thin access to the IAM custom resources: every cluster call of src/auth goes through here. Requests go
 * out through kubeRequest (undici's request, JSON parsed once), not the generated client: its fetch,
 * web streams and model walk cost a login more main-thread time and garbage than the rest of it, and its
 * calls have no timeout.
 */
export class IamApi {
  readonly iam: IamGroup;
  readonly #kc: KubeCredentials;

  constructor(kc: KubeCredentials, iam: IamGroup) {
    this.iam = iam;
    this.#kc = kc;
  }

  #path(plural: IamPlural, name?: string, subresource?: 'status'): string {
    const base = `/apis/${this.iam.group}/${this.iam.version}/${plural}`;
    if (name === undefined) return base;
    return `${base}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
  }

  async #request<T>(
    path: string,
    options: Omit<KubeRequestOptions, 'timeoutMs'>,
    timeoutMs = REQUEST_TIMEOUT_MS,
  ): Promise<T> {
    try {
      return await kubeRequest<T>(this.#kc, path, { ...options, timeoutMs });
    } catch (err) {
      if (err instanceof KubeRequestError) throw new IamRequestError(err.statusCode, err.message);
      throw err;
    }
  }

  /** The object, or undefined when it does not exist. A linearizable read (no resourceVersion): never stale. */
  async get<T extends KubernetesObject>(plural: IamPlural, name: string): Promise<T | undefined> {
    try {
      return await this.#request<T>(this.#path(plural, name), {});
    } catch (err) {
      if (codeOf(err) === 404) return undefined;
      throw err;
    }
  }

  async create<T extends KubernetesObject>(plural: IamPlural, body: T): Promise<T> {
    return this.#request<T>(this.#path(plural) + WRITE_QUERY, { method: 'POST', body });
  }

  /** Compare-and-swap: fails with ConflictError unless the object is still at body.metadata.resourceVersion. */
  async replace<T extends KubernetesObject>(plural: IamPlural, body: T, subresource?: 'status'): Promise<T> {
    const name = body.metadata!.name!;
    try {
      return await this.#request<T>(this.#path(plural, name, subresource) + WRITE_QUERY, {
        method: 'PUT',
        body,
      });
    } catch (err) {
      if (codeOf(err) === 409) throw new ConflictError(`${plural}/${name} changed concurrently`);
      throw err;
    }
  }

  /**
   * Merges `patch` into the object's status subresource (an RFC 7386 merge patch) with no resourceVersion
   * precondition, so it never conflicts: only for fields where the last writer may win, and which no
   * compare-and-swap decision reads.
   */
  async mergePatchStatus<T extends KubernetesObject>(
    plural: IamPlural,
    name: string,
    patch: Record<string, unknown>,
  ): Promise<T> {
    return this.#request<T>(this.#path(plural, name, 'status') + WRITE_QUERY, {
      method: 'PATCH',
      body: patch,
      contentType: 'application/merge-patch+json',
    });
  }

  /**
   * The objects carrying the label selector's labels: a linearizable list, unless `fromWatchCache`, when
   * the kube-apiserver answers from its watch cache (possibly a moment behind, and without reading etcd).
   */
  async list<T extends KubernetesObject>(
    plural: IamPlural,
    labelSelector: string,
    options: { fromWatchCache?: boolean } = {},
  ): Promise<T[]> {
    const query = new URLSearchParams({ labelSelector });
    if (options.fromWatchCache) query.set('resourceVersion', '0');
    const list = await this.#request<{ items?: T[] }>(`${this.#path(plural)}?${query}`, {});
    return list.items ?? [];
  }

  /** Deletes; true if it existed. */
  async delete(plural: IamPlural, name: string): Promise<boolean> {
    try {
      await this.#request(this.#path(plural, name), { method: 'DELETE' });
      return true;
    } catch (err) {
      if (codeOf(err) === 404) return false;
      throw err;
    }
  }

  informer<T extends KubernetesObject>(
    plural: IamPlural,
    deps: { logger: Logger; metrics?: CacheMetrics; transform?: (o: T) => T },
  ): Informer<T> {
    return new Informer<T>({
      kind: `${plural}.${this.iam.group}`,
      list: () => this.#request<ListResult<T>>(this.#path(plural), {}, LIST_TIMEOUT_MS),
      watch: kubeWatch(this.#kc, this.#path(plural)),
      logger: deps.logger,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ...(deps.transform ? { transform: deps.transform } : {}),
    });
  }
}

/** The kube-apiserver's HTTP code of a refusal of this module's requests. */
export function codeOf(err: unknown): number | undefined {
  return err instanceof IamRequestError ? err.code : undefined;
}
