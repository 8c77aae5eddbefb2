import {
  ApiException,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { Informer, kubeWatch, type ListResult } from '../cluster/informer.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import type { Logger } from '../observability/logger.ts';
import type { IamGroup } from './iam-resources.ts';

export type IamPlural = 'users' | 'sessions' | 'loginthrottles' | 'loginrecords';

/** A bound on a merge patch's round trip (the generated client's calls have none of their own). */
const PATCH_TIMEOUT_MS = 10_000;

/** Another writer changed the object since we read it (HTTP 409 on a resourceVersion precondition). */
export class ConflictError extends Error {}

/** Thin access to the IAM custom resources: every cluster call of src/auth goes through here. */
export class IamApi {
  readonly iam: IamGroup;
  readonly #kc: KubeConfig;
  readonly #api: CustomObjectsApi;

  constructor(kc: KubeConfig, iam: IamGroup) {
    this.iam = iam;
    this.#kc = kc;
    this.#api = kc.makeApiClient(CustomObjectsApi);
  }

  #ref(plural: IamPlural) {
    return { group: this.iam.group, version: this.iam.version, plural };
  }

  /** The object, or undefined when it does not exist. A linearizable read (no resourceVersion): never stale. */
  async get<T extends KubernetesObject>(plural: IamPlural, name: string): Promise<T | undefined> {
    try {
      return (await this.#api.getClusterCustomObject({ ...this.#ref(plural), name })) as T;
    } catch (err) {
      if (codeOf(err) === 404) return undefined;
      throw err;
    }
  }

  async create<T extends KubernetesObject>(plural: IamPlural, body: T): Promise<T> {
    return (await this.#api.createClusterCustomObject({ ...this.#ref(plural), body })) as T;
  }

  /** Compare-and-swap: fails with ConflictError unless the object is still at body.metadata.resourceVersion. */
  async replace<T extends KubernetesObject>(plural: IamPlural, body: T, subresource?: 'status'): Promise<T> {
    const param = { ...this.#ref(plural), name: body.metadata!.name!, body };
    try {
      return (
        subresource === 'status'
          ? await this.#api.replaceClusterCustomObjectStatus(param)
          : await this.#api.replaceClusterCustomObject(param)
      ) as T;
    } catch (err) {
      if (codeOf(err) === 409) throw new ConflictError(`${plural}/${param.name} changed concurrently`);
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
    const path = `/apis/${this.iam.group}/${this.iam.version}/${plural}/${encodeURIComponent(name)}/status`;
    return kubeRequest<T>(this.#kc, path, {
      method: 'PATCH',
      body: patch,
      contentType: 'application/merge-patch+json',
      timeoutMs: PATCH_TIMEOUT_MS,
    });
  }

  /** The objects carrying the label selector's labels (a linearizable list). */
  async list<T extends KubernetesObject>(plural: IamPlural, labelSelector: string): Promise<T[]> {
    const list = (await this.#api.listClusterCustomObject({ ...this.#ref(plural), labelSelector })) as {
      items?: T[];
    };
    return list.items ?? [];
  }

  /** Deletes; true if it existed. */
  async delete(plural: IamPlural, name: string): Promise<boolean> {
    try {
      await this.#api.deleteClusterCustomObject({ ...this.#ref(plural), name });
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
      list: async () => (await this.#api.listClusterCustomObject({ ...this.#ref(plural) })) as ListResult<T>,
      watch: kubeWatch(this.#kc, `/apis/${this.iam.group}/${this.iam.version}/${plural}`),
      logger: deps.logger,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ...(deps.transform ? { transform: deps.transform } : {}),
    });
  }
}

export function codeOf(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}
