import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { Informer, kubeWatch, type Freshness, type ListResult, type WatchFn } from '../cluster/informer.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';
import { allocationPrefix, NO_ALLOCATION } from './node-allocation.ts';
import { NodeIndex } from './node-index.ts';
import { nodeEntry, withAllocation, type AllocationView, type NodeEntry, type RawNode } from './node-view.ts';
import type { AllocationSource } from './pod-cache.ts';

/**
 * Passes a node's entry from the list/watch to the index once. The informer freezes what it stores,
 * but not private fields: once taken, the informer's copy holds only the node's identity, so each
 * node's bytes live once, in the index (which replaces them when the node's pods change).
 */
class Handoff {
  #entry: NodeEntry | undefined;
  constructor(entry: NodeEntry | undefined) {
    this.#entry = entry;
  }
  take(): NodeEntry | undefined {
    const entry = this.#entry;
    this.#entry = undefined;
    return entry;
  }
}

/** What the informer stores per node: its identity, and its new entry until the index takes it. */
interface CachedNode {
  metadata: { name: string; resourceVersion: string };
  handoff: Handoff;
}

export interface NodeCacheOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  metrics?: CacheMetrics;
  /** Names the allocation annotations (`node.<platformName>.io/…`) and the alias annotation. */
  platformName?: string;
  /** Pod requests and limits per node; without it every node shows zero allocation. */
  allocations?: AllocationSource;
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
   * Identifies the content of the index: the resourceVersions at which the nodes and the pods'
   * allocations last changed. Equal on two replicas that saw the same events, so ETags survive load
   * balancing.
   */
  readonly stateTag: string;
}

/**
 * The cluster's nodes, kept by a watch: every node the list or the watch delivers is turned at once
 * into an index entry holding its response bytes (without managedFields, with the allocation
 * annotations), which the index orders, so requests never serialise or sort. When a node's pods
 * change, only that node's annotation bytes are replaced.
 */
export class NodeCache implements NodeSource {
  readonly index: NodeIndex;
  readonly informer: Informer<CachedNode>;
  readonly #allocations: AllocationSource | undefined;
  readonly #prefix: string;
  #nodeTag = '';
  #allocationTag = '';
  readonly #pendingNodes = new Set<string>();
  /** Cancels the deferred start of the nodes' informer (see start()). */
  #cancelStart: (() => void) | undefined;

  constructor(options: NodeCacheOptions) {
    const { kubeConfig, logger } = options;
    const platformName = options.platformName ?? 'platform';
    this.#prefix = allocationPrefix(platformName);
    this.#allocations = options.allocations;
    this.index = new NodeIndex({ aliasAnnotation: `${platformName}.io/alias-name` });
    const listTimeoutMs = options.listTimeoutMs ?? 120_000;
    this.informer = new Informer<CachedNode>({
      kind: 'nodes',
      // Raw JSON, not the typed client: its Date conversion would change the timestamps we serve.
      list: async () => {
        const listed = await kubeRequest<ListResult<RawNode>>(kubeConfig, '/api/v1/nodes', {
          timeoutMs: listTimeoutMs,
        });
        // A node the index already holds at this resourceVersion is not rebuilt (the informer will
        // not report it either).
        return {
          ...listed,
          items: listed.items.map((node) =>
            this.index.get(node.metadata?.name ?? '')?.resourceVersion === node.metadata?.resourceVersion
              ? this.#cached(node, false)
              : this.#cached(node, true),
          ),
        };
      },
      watch: this.#entriesWatch(kubeWatch(kubeConfig, '/api/v1/nodes')),
      logger,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.initialBackoffMs !== undefined ? { initialBackoffMs: options.initialBackoffMs } : {}),
      ...(options.maxBackoffMs !== undefined ? { maxBackoffMs: options.maxBackoffMs } : {}),
    });
    this.informer.onEvent((type, node) => {
      if (type === 'DELETED') this.index.delete(node.metadata.name);
      else {
        const entry = node.handoff.take();
        if (entry) this.index.upsert(entry);
      }
      // The informer has already moved to the event's (or the relist's) resourceVersion.
      this.#nodeTag = this.informer.resourceVersion;
    });
    // Coalesced: a burst of pod events (a relist of thousands of pods, a rollout) rebuilds each
    // node's bytes once, at the end of the current turn, not once per pod.
    this.#allocations?.onChange((name) => {
      this.#pendingNodes.add(name);
      if (this.#pendingNodes.size === 1) setImmediate(() => this.#applyAllocations());
    });
  }

  #applyAllocations(): void {
    for (const name of this.#pendingNodes) {
      const entry = this.index.get(name);
      if (entry) this.index.upsert(withAllocation(entry, this.#view(name)));
    }
    this.#pendingNodes.clear();
    // Taken now, with the entries: a body built for this tag always holds these allocations.
    this.#allocationTag = this.#allocations?.stateTag ?? '';
  }

  #view(name: string): AllocationView {
    return { prefix: this.#prefix, sums: this.#allocations?.allocationOf(name) ?? NO_ALLOCATION };
  }

  #cached(node: RawNode, build: boolean): CachedNode {
    const name = node.metadata?.name ?? '';
    return {
      metadata: { name, resourceVersion: node.metadata?.resourceVersion ?? '' },
      handoff: new Handoff(build ? nodeEntry(node, this.#view(name)) : undefined),
    };
  }

  /** The nodes watch, handing the informer cached entries instead of Nodes (other events unchanged). */
  #entriesWatch(watch: WatchFn): WatchFn {
    return (query, onEvent, onDone) =>
      watch(
        query,
        (event) => {
          const type = event.type;
          const object = event.object as RawNode;
          if (type === 'ADDED' || type === 'MODIFIED') onEvent({ type, object: this.#cached(object, true) });
          else if (type === 'DELETED') onEvent({ type, object: this.#cached(object, false) });
          else onEvent(event);
        },
        onDone,
      );
  }

  get synced(): boolean {
    return this.informer.synced && (this.#allocations?.synced ?? true);
  }

  get stateTag(): string {
    const nodeTag = this.#nodeTag || this.informer.resourceVersion;
    return this.#allocations ? `${nodeTag}.${this.#allocationTag}` : nodeTag;
  }

  freshness(): Freshness {
    const nodes = this.informer.freshness();
    const pods = this.#allocations?.freshness() ?? nodes;
    return {
      connected: nodes.connected && pods.connected,
      staleSeconds: Math.max(nodes.staleSeconds, pods.staleSeconds),
    };
  }

  start(): void {
    if (!this.#allocations) {
      this.informer.start();
      return;
    }
    // The nodes are listed once the pods' sums are in, so each node's bytes are built once, with its
    // sums. Listed first, every node would be built twice (zeros, then the sums); at 5,000 nodes and
    // 50,000 pods that churn left ~30 MB more RSS behind (docs/benchmarks.md). Nothing is served
    // before both have synced either way.
    this.#cancelStart = this.#allocations.whenSynced(() => {
      this.#cancelStart = undefined;
      this.informer.start();
    });
  }

  stop(): Promise<void> {
    this.#cancelStart?.();
    this.#cancelStart = undefined;
    return this.informer.stop();
  }

  /** Nodes and, when given, the pods' allocations. */
  async waitForSynced(timeoutMs: number): Promise<void> {
    await Promise.all([this.informer.waitForSynced(timeoutMs), this.#allocations?.waitForSynced(timeoutMs)]);
  }
}
