import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { Informer, kubeWatch, type Freshness, type WatchFn } from '../cluster/informer.ts';
import { kubeRequestBytes } from '../cluster/kube-request.ts';
import { eachListItem } from '../cluster/list-items.ts';
import type { Logger } from '../observability/logger.ts';
import type { NodeAllocation } from './node-allocation.ts';
import { packPod } from './pod-body.ts';
import { claimsOf, sameClaims } from './pod-claims.ts';
import { occupiesNode, podFootprint, type PodFootprint, type RawPod } from './pod-resources.ts';

/**
 * What the cache keeps of a pod: its key, its resourceVersion, what it adds to its node, what the
 * resources API's pod index sorts and filters by, the claims it mounts, and the pod as that API serves
 * it, packed (pod-body.ts). Never the parsed Pod; one flat object whose node and namespace names are
 * the one string the cache holds per node and namespace (the only nested one, the claims array, exists
 * for the few pods that mount claims). docs/resources-api.md has the measured cost per pod.
 */
interface CachedPod extends IndexedPod {
  /** Whether it counts towards its node: bound, not Succeeded, not Failed. */
  readonly occupies: boolean;
  readonly cpuRequests: number;
  readonly cpuLimits: number;
  readonly memoryRequests: number;
  readonly memoryLimits: number;
  /** The PersistentVolumeClaims it mounts (pod-claims.ts); undefined for none. */
  readonly claims: readonly string[] | undefined;
}

/** What the pod index reads of a pod. */
export interface IndexedPod {
  /** `namespace/name`, the informer's key (the name is the rest after the namespace and `/`). */
  readonly key: string;
  readonly namespace: string;
  /** `spec.nodeName`; undefined for a pod not bound yet. */
  readonly node: string | undefined;
  /** `metadata.creationTimestamp` in whole seconds since {@link INDEX_EPOCH_MS} (small integers cost no heap). */
  readonly createdS: number;
  /** `status.startTime` the same way, or the creation time for a pod not started (as the list sorts them). */
  readonly startedS: number;
  readonly resourceVersion: string;
  /** The pod as the resources API serves it, packed (pod-body.ts: unpackPod gives its JSON). */
  readonly body: string;
}

/** 2020-01-01T00:00:00Z: times are kept as seconds after it, which stay small integers until 2054. */
export const INDEX_EPOCH_MS = Date.UTC(2020, 0, 1);

/** The pod's name, from its key. */
export function podName(pod: IndexedPod): string {
  return pod.key.slice(pod.namespace.length + 1);
}

/** Where to look: the pods of one namespace, of one node, or (neither) all. */
export interface PodScope {
  namespace?: string | undefined;
  node?: string | undefined;
}

/** The pods the index answers from, and whether they are all in yet. */
export interface PodIndexSource {
  readonly synced: boolean;
  /** Whether the watch is connected (else the records may be behind by `staleSeconds`). */
  freshness(): Freshness;
  /** The pods in the scope (and maybe others: callers still test what they asked for). */
  pods(scope?: PodScope): Iterable<IndexedPod>;
  pod(namespace: string, name: string): IndexedPod | undefined;
}

/** Kubernetes times have whole seconds; absent or malformed: the epoch, as the list pipeline reads them. */
function indexSeconds(timestamp: string | undefined): number {
  const ms = timestamp === undefined ? NaN : Date.parse(timestamp);
  return Math.floor(((Number.isNaN(ms) ? 0 : ms) - INDEX_EPOCH_MS) / 1000);
}

/** The node a pod's requests count towards, if any. */
function allocatedNode(pod: CachedPod | undefined): string | undefined {
  return pod?.occupies ? pod.node : undefined;
}

const NO_FOOTPRINT: PodFootprint = { cpuRequests: 0, cpuLimits: 0, memoryRequests: 0, memoryLimits: 0 };

/** Turns pods into cached pods, sharing one string per node and per namespace among their pods. */
class Compactor {
  readonly #nodeNames = new Map<string, string>();
  readonly #namespaces = new Map<string, string>();

  compact(pod: RawPod): CachedPod {
    const occupies = occupiesNode(pod);
    const footprint = occupies ? podFootprint(pod) : NO_FOOTPRINT;
    const namespace = intern(this.#namespaces, pod.metadata?.namespace ?? '');
    const nodeName = pod.spec?.nodeName;
    const createdS = indexSeconds(pod.metadata?.creationTimestamp);
    const started = pod.status?.startTime;
    const startedS =
      started === undefined || Number.isNaN(Date.parse(started)) ? createdS : indexSeconds(started);
    return {
      key: `${namespace}/${pod.metadata?.name ?? ''}`,
      namespace,
      resourceVersion: pod.metadata?.resourceVersion ?? '',
      node: nodeName ? intern(this.#nodeNames, nodeName) : undefined,
      occupies,
      cpuRequests: footprint.cpuRequests,
      cpuLimits: footprint.cpuLimits,
      memoryRequests: footprint.memoryRequests,
      memoryLimits: footprint.memoryLimits,
      createdS,
      startedS,
      claims: claimsOf(pod),
      body: packPod(pod),
    };
  }

  /** Forgets node names no occupying pod is on any more (called when a node's last one leaves). */
  forget(node: string): void {
    this.#nodeNames.delete(node);
  }

  /** Forgets a namespace's name once its last pod is gone. */
  forgetNamespace(namespace: string): void {
    this.#namespaces.delete(namespace);
  }
}

function intern(strings: Map<string, string>, value: string): string {
  const known = strings.get(value);
  if (known !== undefined) return known;
  strings.set(value, value);
  return value;
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

/** Which PersistentVolumeClaims pods mount, for the resources API's `in-use` annotation. */
export interface ClaimUsage {
  readonly synced: boolean;
  freshness(): Freshness;
  /** Changes whenever some claim starts or stops being mounted. */
  readonly claimsTag: string;
  /** Whether any pod (in any phase, as the original counts them) mounts the claim. */
  inUse(namespace: string, claim: string): boolean;
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
 * The requests and limits of the pods on each node, kept by a watch of every pod (finished and unbound
 * ones too: the resources API's pod index must see every pod the kube-apiserver would list). Per pod
 * its key, namespace, node, two times, four numbers, its claims and its packed body are kept, and it is
 * filed under its namespace and its node; per node the four
 * sums of the pods that occupy it (integers: millicores and bytes, so adding and subtracting is exact);
 * per mounted claim the number of pods mounting it.
 */
export class PodCache implements AllocationSource, PodIndexSource, ClaimUsage {
  readonly informer: Informer<CachedPod>;
  readonly #sums = new Map<string, Sums>();
  /** Pods mounting each claim, by `namespace/claim`; only claims some pod mounts. */
  readonly #claimPods = new Map<string, number>();
  readonly #listeners = new Set<(node: string) => void>();
  /** The pods of each namespace and of each node, by key: a page of one is picked without a scan of all. */
  readonly #byNamespace = new Map<string, Map<string, CachedPod>>();
  readonly #byNode = new Map<string, Map<string, CachedPod>>();
  readonly #compactor: Compactor;
  #stateTag = '';
  #claimsTag = '';

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
          const query = new URLSearchParams({ limit: String(pageSize) });
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
      watch: compactWatch(kubeWatch(kubeConfig, '/api/v1/pods', undefined, {}), compactor),
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
      this.#unplace(before, after);
      this.#place(after);
      if (!sameClaims(before?.claims, after?.claims)) {
        this.#countClaims(before, -1);
        this.#countClaims(after, 1);
        this.#claimsTag = this.informer.resourceVersion;
      }
      if (sameUsage(before, after)) return;
      const beforeNode = allocatedNode(before);
      const afterNode = allocatedNode(after);
      if (beforeNode !== undefined) this.#add(beforeNode, before!, -1);
      if (afterNode !== undefined) this.#add(afterNode, after!, 1);
      this.#stateTag = this.informer.resourceVersion;
      const changed = new Set([beforeNode, afterNode]);
      for (const node of changed) if (node !== undefined) this.#notify(node);
    });
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  get stateTag(): string {
    return this.#stateTag;
  }

  get claimsTag(): string {
    return this.#claimsTag;
  }

  inUse(namespace: string, claim: string): boolean {
    return this.#claimPods.has(`${namespace}/${claim}`);
  }

  /** Pods cached (every pod, running or not). */
  get size(): number {
    return this.informer.size;
  }

  freshness(): Freshness {
    return this.informer.freshness();
  }

  /** The pods as the pod index reads them (the store's own objects, frozen: nothing is copied). */
  pods(scope: PodScope = {}): Iterable<IndexedPod> {
    if (scope.namespace !== undefined) return this.#byNamespace.get(scope.namespace)?.values() ?? [];
    if (scope.node !== undefined) return this.#byNode.get(scope.node)?.values() ?? [];
    return this.informer.values();
  }

  pod(namespace: string, name: string): IndexedPod | undefined {
    return this.informer.get(name, namespace);
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

  #countClaims(pod: CachedPod | undefined, sign: 1 | -1): void {
    for (const claim of pod?.claims ?? []) {
      const key = `${pod!.namespace}/${claim}`;
      const pods = (this.#claimPods.get(key) ?? 0) + sign;
      if (pods > 0) this.#claimPods.set(key, pods);
      else this.#claimPods.delete(key);
    }
  }

  #place(pod: CachedPod | undefined): void {
    if (!pod) return;
    groupOf(this.#byNamespace, pod.namespace).set(pod.key, pod);
    if (pod.node !== undefined) groupOf(this.#byNode, pod.node).set(pod.key, pod);
  }

  /** Takes `pod` out of its groups; `next` is what replaces it (a MODIFIED event), if anything. */
  #unplace(pod: CachedPod | undefined, next: CachedPod | undefined): void {
    if (!pod) return;
    // A namespace's interned name is forgotten with its last pod.
    if (leaveGroup(this.#byNamespace, pod.namespace, pod.key) && next?.namespace !== pod.namespace)
      this.#compactor.forgetNamespace(pod.namespace);
    if (pod.node !== undefined) leaveGroup(this.#byNode, pod.node, pod.key);
  }

  #notify(node: string): void {
    for (const listener of this.#listeners) listener(node);
  }
}

function groupOf(groups: Map<string, Map<string, CachedPod>>, name: string): Map<string, CachedPod> {
  let group = groups.get(name);
  if (!group) groups.set(name, (group = new Map()));
  return group;
}

/** Takes the pod out of its group; true when that emptied the group (then dropped). */
function leaveGroup(groups: Map<string, Map<string, CachedPod>>, name: string, key: string): boolean {
  const group = groups.get(name);
  if (!group?.delete(key) || group.size > 0) return false;
  groups.delete(name);
  return true;
}

/** Whether two versions of a pod add the same to the same node (both absent: nothing to do). */
function sameUsage(a: CachedPod | undefined, b: CachedPod | undefined): boolean {
  const nodeA = allocatedNode(a);
  const nodeB = allocatedNode(b);
  if (nodeA === undefined || nodeB === undefined) return nodeA === nodeB;
  return (
    nodeA === nodeB &&
    a!.cpuRequests === b!.cpuRequests &&
    a!.cpuLimits === b!.cpuLimits &&
    a!.memoryRequests === b!.memoryRequests &&
    a!.memoryLimits === b!.memoryLimits
  );
}
