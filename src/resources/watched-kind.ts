import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { Informer, kubeWatch, type Freshness } from '../cluster/informer.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';
import type { KubeList, KubeObject } from './kube-object.ts';
import { collectionPath, type ResourceKind } from './kinds.ts';

export interface WatchedKindOptions {
  kind: ResourceKind;
  kubeConfig: KubeConfig;
  logger: Logger;
  metrics?: CacheMetrics;
  listTimeoutMs?: number;
}

/** managedFields are bookkeeping of the kube-apiserver, often half an object: not kept, not served. */
function withoutManagedFields(object: KubeObject): KubeObject {
  if (!object.metadata || !('managedFields' in object.metadata)) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/**
 * A kind kept in memory by list + watch with the server's own identity; a namespaced kind's objects
 * are also filed by namespace, so a namespace's page is cut without a scan of every object.
 */
export class WatchedKind {
  readonly kind: ResourceKind;
  readonly informer: Informer<KubeObject>;
  readonly #byNamespace = new Map<string, Map<string, KubeObject>>();

  constructor(options: WatchedKindOptions) {
    const { kind, kubeConfig } = options;
    this.kind = kind;
    const path = collectionPath(kind);
    const listTimeoutMs = options.listTimeoutMs ?? 60_000;
    this.informer = new Informer<KubeObject>({
      kind: kind.resource,
      list: () => kubeRequest<KubeList>(kubeConfig, path, { timeoutMs: listTimeoutMs }),
      watch: kubeWatch(kubeConfig, path),
      transform: withoutManagedFields,
      logger: options.logger,
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
    if (kind.namespaced) this.informer.onEvent((type, object) => this.#file(type, object));
  }

  #file(type: string, object: KubeObject): void {
    const namespace = object.metadata?.namespace ?? '';
    const key = object.metadata?.name ?? '';
    let group = this.#byNamespace.get(namespace);
    if (type === 'DELETED') {
      if (group?.delete(key) && group.size === 0) this.#byNamespace.delete(namespace);
      return;
    }
    // An object keeps its namespace and name: a MODIFIED replaces it in its group.
    if (!group) this.#byNamespace.set(namespace, (group = new Map()));
    group.set(key, object);
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  /** Changes whenever the content does: the resourceVersion the cache is current at. */
  get stateTag(): string {
    return this.informer.resourceVersion;
  }

  freshness(): Freshness {
    return this.informer.freshness();
  }

  /** Every object, or (a namespaced kind) those of one namespace. */
  objects(namespace?: string): KubeObject[] {
    if (namespace === undefined || !this.kind.namespaced) return this.informer.list();
    return [...(this.#byNamespace.get(namespace)?.values() ?? [])];
  }

  get(name: string, namespace?: string): KubeObject | undefined {
    return this.informer.get(name, namespace);
  }

  start(): void {
    this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }
}
