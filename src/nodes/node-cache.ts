import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { Informer, kubeWatch, type Freshness, type ListResult, type WatchFn } from '../cluster/informer.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';
import { NodeIndex } from './node-index.ts';
import { nodeEntry, type NodeEntry, type RawNode } from './node-view.ts';

/**
 * What the informer stores per node: the index entry (response bytes, sort keys, labels, status
 * class) and the identity the informer needs. The parsed Node itself is dropped once its entry is
 * built, so the cache holds each node about once, as bytes, rather than as a large object graph.
 */
interface CachedNode {
  metadata: { name: string; resourceVersion: string };
  entry: NodeEntry;
}

function cached(node: RawNode): CachedNode {
  const entry = nodeEntry(node);
  return { metadata: { name: entry.name, resourceVersion: entry.resourceVersion }, entry };
}

/** The nodes watch, handing the informer cached entries instead of Nodes (other events unchanged). */
function entriesWatch(watch: WatchFn): WatchFn {
  return (query, onEvent, onDone) =>
    watch(
      query,
      (event) => {
        const objectEvent = event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED';
        onEvent(objectEvent ? { type: event.type, object: cached(event.object as RawNode) } : event);
      },
      onDone,
    );
}

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
 * The cluster's nodes, kept by a watch: every node the list or the watch delivers is turned at once
 * into an index entry holding its response bytes (without managedFields), which the shared informer
 * stores and the index orders, so requests never serialise or sort.
 */
export class NodeCache implements NodeSource {
  readonly index = new NodeIndex();
  readonly informer: Informer<CachedNode>;
  #stateTag = '';

  constructor(options: NodeCacheOptions) {
    const { kubeConfig, logger } = options;
    const listTimeoutMs = options.listTimeoutMs ?? 120_000;
    this.informer = new Informer<CachedNode>({
      kind: 'nodes',
      // Raw JSON, not the typed client: its Date conversion would change the timestamps we serve.
      list: async () => {
        const listed = await kubeRequest<ListResult<RawNode>>(kubeConfig, '/api/v1/nodes', {
          timeoutMs: listTimeoutMs,
        });
        return { ...listed, items: listed.items.map(cached) };
      },
      watch: entriesWatch(kubeWatch(kubeConfig, '/api/v1/nodes')),
      logger,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.initialBackoffMs !== undefined ? { initialBackoffMs: options.initialBackoffMs } : {}),
      ...(options.maxBackoffMs !== undefined ? { maxBackoffMs: options.maxBackoffMs } : {}),
    });
    this.informer.onEvent((type, node) => {
      if (type === 'DELETED') this.index.delete(node.metadata.name);
      else this.index.upsert(node.entry);
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
