import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { Informer, kubeWatch, type Freshness, type WatchFn } from '../cluster/informer.ts';
import { kubeRequestBytes } from '../cluster/kube-request.ts';
import { eachListItem } from '../cluster/list-items.ts';
import type { Logger } from '../observability/logger.ts';
import type { NodeAllocation } from './node-allocation.ts';
import { occupiesNode, podFootprint, type PodFootprint, type RawPod } from './pod-resources.ts';

/**
 * Only pods that occupy a node: bound, not Succeeded, not Failed. The apiserver filters, so finished
 * pods never reach us, and a pod that finishes arrives as DELETED (it left the selection).
 */
const OCCUPYING = 'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed';

/**
 * What the cache keeps of a pod: its key, its resourceVersion, and what it adds to its node. Never the
 * Pod itself; one flat object (no nested ones), whose node name is the one string the cache holds per
 * node. About 170 bytes of V8 heap per pod with the store's map entry (measured: docs/benchmarks.md).
 */
interface CachedPod {
  /** `namespace/name`, the informer's key. */
  readonly key: string;
  readonly resourceVersion: string;
  /** Undefined for a pod that does not occupy a node (should the selector ever let one through). */
  readonly node: string | undefined;
  readonly cpuRequests: number;
  readonly cpuLimits: number;
  readonly memoryRequests: number;
  readonly memoryLimits: number;
}

const NO_FOOTPRINT: PodFootprint = { cpuRequests: 0, cpuLimits: 0, memoryRequests: 0, memoryLimits: 0 };

/** Turns pods into cached pods, sharing one string per node name among all the pods on it. */
class Compactor {
  readonly #nodeNames = new Map<string, string>();

  compact(pod: RawPod): CachedPod {
    const occupies = occupiesNode(pod);
    const footprint = occupies ? podFootprint(pod) : NO_FOOTPRINT;
    return {
      key: `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`,
      resourceVersion: pod.metadata?.resourceVersion ?? '',
      node: occupies ? this.#nodeName(pod.spec!.nodeName!) : undefined,
      cpuRequests: footprint.cpuRequests,
      cpuLimits: footprint.cpuLimits,
      memoryRequests: footprint.memoryRequests,
      memoryLimits: footprint.memoryLimits,
    };
  }

  /** Forgets node names no pod is on any more (called when a node's last pod leaves). */
  forget(node: string): void {
    this.#nodeNames.delete(node);
  }

  #nodeName(name: string): string {
    const known = this.#nodeNames.get(name);
    if (known !== undefined) return known;
    this.#nodeNames.set(name, name);
    return name;
  }
}

/** The pods watch, handing the informer cached pods instead of Pods (other events unchanged). */
function compactWatch(watch: WatchFn, compactor: Compactor): WatchFn {
  return (query, onEvent, onDone) =>
    watch(
      query,
      (event) => {
        const objectEvent = event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED';
        onEvent(
          objectEvent ? { type: event.type, object: compactor.compact(event.object as RawPod) } : event,
        );
      },
      onDone,
    );
}

/** What the node cache reads: each node's sums, when they change, and how current they are. */
export interface AllocationSource {
  readonly synced: boolean;
  freshness(): Freshness;
  /** Changes whenever some node's sums change (the resourceVersion of the pod event that did it). */
  readonly stateTag: string;
  allocationOf(node: string): NodeAllocation | undefined;
  /** Called with a node's name whenever its sums change. Returns the unsubscribe function. */
  onChange(listener: (node: string) => void): () => void;
  /** Calls `listener` once, when the first list is in (at once if it is). Returns the cancel function. */
  whenSynced(listener: () => void): () => void;
  waitForSynced(timeoutMs: number): Promise<void>;
}

export interface PodCacheOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  metrics?: CacheMetrics;
  /** Pods per LIST page: a relist never holds more than one page of whole Pods. */
  pageSize?: number;
  /** Bound on each LIST page. */
  listTimeoutMs?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

interface Sums {
  cpuRequests: number;
  cpuLimits: number;
  memoryRequests: number;
  memoryLimits: number;
  pods: number;
}

/**
 * The requests and limits of the pods on each node, kept by a watch of the pods that occupy a node.
 * Per pod only its name, node and four numbers are kept; per node the four sums (integers:
 * millicores and bytes, so adding and subtracting is exact).
 */
export class PodCache implements AllocationSource {
  readonly informer: Informer<CachedPod>;
  readonly #sums = new Map<string, Sums>();
  readonly #listeners = new Set<(node: string) => void>();
  readonly #compactor: Compactor;
  #stateTag = '';

  constructor(options: PodCacheOptions) {
    const { kubeConfig, logger } = options;
    const pageSize = options.pageSize ?? 500;
    const listTimeoutMs = options.listTimeoutMs ?? 60_000;
    const compactor = new Compactor();
    this.#compactor = compactor;
    this.informer = new Informer<CachedPod>({
      kind: 'pods',
      list: async () => {
        const items: CachedPod[] = [];
        let resourceVersion: string | undefined;
        let continueToken = '';
        do {
          const query = new URLSearchParams({ limit: String(pageSize), fieldSelector: OCCUPYING });
          if (continueToken) query.set('continue', continueToken);
          const bytes = await kubeRequestBytes(kubeConfig, `/api/v1/pods?${query}`, {
            timeoutMs: listTimeoutMs,
          });
          // Item by item: a page of whole Pods is never held at once (see eachListItem).
          const page = eachListItem<RawPod>(bytes, (pod) => items.push(compactor.compact(pod)));
          // Every page of a continued list is the same snapshot; the first names it.
          resourceVersion ??= page.resourceVersion;
          continueToken = page.continue ?? '';
        } while (continueToken);
        return { items, metadata: { resourceVersion: resourceVersion ?? '' } };
      },
      watch: compactWatch(
        kubeWatch(kubeConfig, '/api/v1/pods', undefined, { fieldSelector: OCCUPYING }),
        compactor,
      ),
      keyOf: (pod) => pod.key,
      versionOf: (pod) => pod.resourceVersion,
      logger,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.initialBackoffMs !== undefined ? { initialBackoffMs: options.initialBackoffMs } : {}),
      ...(options.maxBackoffMs !== undefined ? { maxBackoffMs: options.maxBackoffMs } : {}),
    });
    this.informer.onEvent((type, pod, previous) => {
      // A DELETED event carries the pod as it was stored.
      const before = type === 'DELETED' ? pod : previous;
      const after = type === 'DELETED' ? undefined : pod;
      if (sameUsage(before, after)) return;
      if (before?.node !== undefined) this.#add(before.node, before, -1);
      if (after?.node !== undefined) this.#add(after.node, after, 1);
      this.#stateTag = this.informer.resourceVersion;
      const changed = new Set([before?.node, after?.node]);
      for (const node of changed) if (node !== undefined) this.#notify(node);
    });
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  get stateTag(): string {
    return this.#stateTag;
  }

  /** Pods counted, over all nodes. */
  get size(): number {
    return this.informer.size;
  }

  freshness(): Freshness {
    return this.informer.freshness();
  }

  allocationOf(node: string): NodeAllocation | undefined {
    return this.#sums.get(node);
  }

  onChange(listener: (node: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  start(): void {
    this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  whenSynced(listener: () => void): () => void {
    return this.informer.whenSynced(listener);
  }

  waitForSynced(timeoutMs: number): Promise<void> {
    return this.informer.waitForSynced(timeoutMs);
  }

  #add(node: string, usage: PodFootprint, sign: 1 | -1): void {
    let sums = this.#sums.get(node);
    if (!sums) {
      sums = { cpuRequests: 0, cpuLimits: 0, memoryRequests: 0, memoryLimits: 0, pods: 0 };
      this.#sums.set(node, sums);
    }
    sums.cpuRequests += sign * usage.cpuRequests;
    sums.cpuLimits += sign * usage.cpuLimits;
    sums.memoryRequests += sign * usage.memoryRequests;
    sums.memoryLimits += sign * usage.memoryLimits;
    sums.pods += sign;
    if (sums.pods === 0) {
      this.#sums.delete(node);
      this.#compactor.forget(node);
    }
  }

  #notify(node: string): void {
    for (const listener of this.#listeners) listener(node);
  }
}

/** Whether two versions of a pod add the same to the same node (both absent: nothing to do). */
function sameUsage(a: CachedPod | undefined, b: CachedPod | undefined): boolean {
  const nodeOf = (pod: CachedPod | undefined) => pod?.node;
  if (nodeOf(a) === undefined || nodeOf(b) === undefined) return nodeOf(a) === nodeOf(b);
  return (
    a!.node === b!.node &&
    a!.cpuRequests === b!.cpuRequests &&
    a!.cpuLimits === b!.cpuLimits &&
    a!.memoryRequests === b!.memoryRequests &&
    a!.memoryLimits === b!.memoryLimits
  );
}
