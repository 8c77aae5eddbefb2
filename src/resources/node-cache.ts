import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { Informer, kubeWatch, type Freshness, type ListResult } from '../cluster/informer.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';
import { NodeIndex } from './node-index.ts';
import { nodeEntry, withoutManagedFields, type RawNode } from './node-view.ts';

export interface NodeCacheOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  metrics?: CacheMetrics;
  /** Bound on one full LIST of nodes (thousands of nodes take a while to send). */
  listTimeoutMs?: number;
  /** Informer back-off bounds, shortened in tests. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/** What the node routes read: the index, whether it can be served, and how current it is. */
export interface NodeSource {
  readonly index: NodeIndex;
  readonly synced: boolean;
  freshness(): Freshness;
  /**
   * Identifies the content of the index: the resourceVersion at which it last changed. Equal on two
   * replicas exactly when they hold the same nodes, so ETags survive load balancing.
   */
  readonly stateTag: string;
}

/**
 * The cluster's nodes, kept by a watch: the shared informer holds the objects (raw JSON, without
 * managedFields, frozen), and every change is turned at once into an index entry with the node's
 * response bytes, so requests never serialise or sort.
 */
export class NodeCache implements NodeSource {
  readonly index = new NodeIndex();
  readonly informer: Informer<RawNode>;
  #stateTag = '';

  constructor(options: NodeCacheOptions) {
    const { kubeConfig, logger } = options;
    const listTimeoutMs = options.listTimeoutMs ?? 120_000;
    this.informer = new Informer<RawNode>({
      kind: 'nodes',
      // Raw JSON, not the typed client: its Date conversion would change the timestamps we serve.
      list: () => kubeRequest<ListResult<RawNode>>(kubeConfig, '/api/v1/nodes', { timeoutMs: listTimeoutMs }),
      watch: kubeWatch(kubeConfig, '/api/v1/nodes'),
      transform: withoutManagedFields,
      logger,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.initialBackoffMs !== undefined ? { initialBackoffMs: options.initialBackoffMs } : {}),
      ...(options.maxBackoffMs !== undefined ? { maxBackoffMs: options.maxBackoffMs } : {}),
    });
    this.informer.onEvent((type, node) => {
      if (type === 'DELETED') this.index.delete(node.metadata?.name ?? '');
      else this.index.upsert(nodeEntry(node));
      // The informer has already moved to the event's (or the relist's) resourceVersion.
      this.#stateTag = this.informer.resourceVersion;
    });
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  get stateTag(): string {
    return this.#stateTag || this.informer.resourceVersion;
  }

  freshness(): Freshness {
    return this.informer.freshness();
  }

  start(): void {
    this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  waitForSynced(timeoutMs: number): Promise<void> {
    return this.informer.waitForSynced(timeoutMs);
  }
}
