import { createHash } from 'node:crypto';
import { ApiError } from '../kernel/api-error.ts';
import type { ListQuery } from '../list-query/list-query.ts';
import { podName, type IndexedPod, type PodIndexSource } from '../nodes/pod-cache.ts';
import { PreparedBody } from '../nodes/prepared-response.ts';
import type { Logger } from '../observability/logger.ts';
import type { CallerLister } from './caller-lister.ts';
import { listBody, type Answer, type GetRequest, type KindReader, type ListRequest } from './kind-readers.ts';
import type { KubeObject } from './kube-object.ts';
import type { ResourceKind } from './kinds.ts';

/**
 * Pods pages the pod cache can pick: the page is chosen from the cache's slim per-pod records (no
 * pod is parsed), then only that page's pods are read from the kube-apiserver as the caller. Any
 * query the records cannot answer (labels, owners, status, …) goes to the upstream reader, unchanged.
 */

/** At most this many pods are read one by one for a page; larger pages go upstream. */
export const MAX_INDEX_PAGE = 100;

/** The kind filters the records can answer. */
const INDEXED_FILTERS = new Set(['nodeName']);

/** Whether every part of the query can be answered from the pod index. */
export function indexAnswers(query: ListQuery): boolean {
  return (
    query.limit !== undefined &&
    query.limit <= MAX_INDEX_PAGE &&
    (query.sortBy === 'startTime' || query.sortBy === 'creationTimestamp' || query.sortBy === 'name') &&
    query.uid === undefined &&
    query.labelSelector.empty &&
    query.label.empty &&
    query.annotation.empty &&
    query.alias === undefined &&
    query.status === undefined &&
    [...query.filters.keys()].every((parameter) => INDEXED_FILTERS.has(parameter))
  );
}

export interface IndexPage {
  /** The page's pods in order. */
  pods: { namespace: string; name: string }[];
  totalItems: number;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The list pipeline's order (object-selection.ts) on the records: the sort key, then the name, then
 * the namespace; descending is that order reversed, ties included.
 */
function orderOf(query: ListQuery): (a: IndexedPod, b: IndexedPod) => number {
  const byName = (a: IndexedPod, b: IndexedPod) =>
    compareText(podName(a), podName(b)) || compareText(a.namespace, b.namespace);
  const ascending =
    query.sortBy === 'name'
      ? byName
      : query.sortBy === 'startTime'
        ? (a: IndexedPod, b: IndexedPod) => a.startedS - b.startedS || byName(a, b)
        : (a: IndexedPod, b: IndexedPod) => a.createdS - b.createdS || byName(a, b);
  return query.ascending ? ascending : (a, b) => ascending(b, a);
}

/** Filters, orders and pages the records; only the pods up to the page's end are kept while scanning. */
export function selectIndexPage(
  pods: Iterable<IndexedPod>,
  namespace: string | undefined,
  query: ListQuery,
): IndexPage {
  const limit = query.limit ?? Infinity;
  const offset = (query.page - 1) * (query.limit ?? 0);
  const keep = offset + limit;
  const compare = orderOf(query);
  const node = query.filters.get('nodeName');
  const { name, names } = query;
  const kept: IndexedPod[] = [];
  let totalItems = 0;
  for (const pod of pods) {
    if (namespace !== undefined && pod.namespace !== namespace) continue;
    if (node !== undefined && pod.node !== node) continue;
    if (name !== undefined && !podName(pod).includes(name)) continue;
    if (names !== undefined && !names.has(podName(pod))) continue;
    totalItems++;
    if (kept.length >= keep && compare(pod, kept[kept.length - 1]!) >= 0) continue;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compare(kept[mid]!, pod) <= 0) low = mid + 1;
      else high = mid;
    }
    kept.splice(low, 0, pod);
    if (kept.length > keep) kept.pop();
  }
  return {
    pods: kept.slice(offset).map((pod) => ({ namespace: pod.namespace, name: podName(pod) })),
    totalItems,
  };
}

export type PodsSource = 'index' | 'apiserver';

export interface PodIndexReaderOptions {
  kind: ResourceKind;
  index: PodIndexSource;
  lister: CallerLister;
  /** Everything the index cannot answer. */
  upstream: KindReader;
  logger: Logger;
}

/** The pods kind: from the pod index where it answers the whole query, else from the kube-apiserver. */
export class PodIndexReader implements KindReader {
  readonly #options: PodIndexReaderOptions;

  constructor(options: PodIndexReaderOptions) {
    this.#options = options;
  }

  async list(request: ListRequest): Promise<Answer> {
    const { kind, index, lister, upstream, logger } = this.#options;
    const { identity, namespace, query } = request;
    // Not yet synced, or its watch down (the records may be behind): the list is current.
    const unavailable = !index.synced
      ? 'not synced'
      : !index.freshness().connected
        ? 'watch down'
        : undefined;
    if (unavailable !== undefined || !indexAnswers(query)) {
      if (logger.isDebugEnabled()) {
        logger.debug('pods list answered by the kube-apiserver', { reason: unavailable ?? 'query' });
      }
      return { ...(await upstream.list(request)), source: 'apiserver' };
    }
    const page = selectIndexPage(index.pods(), namespace, query);
    let items: (KubeObject | undefined)[];
    try {
      // As the caller, as the upstream list would read them, from the kube-apiserver's watch cache (the
      // one the index's watch follows: no etcd read). A pod deleted since the index saw it is dropped
      // from the page (totalItems still counts it: the index's view, a moment old).
      items = await Promise.all(
        page.pods.map((pod) =>
          lister
            .get(identity, kind, pod.namespace, pod.name, { fromWatchCache: true })
            .catch((err: unknown) => {
              if (err instanceof ApiError && err.kind === 'NotFound') return undefined;
              throw err;
            }),
        ),
      );
    } catch (err) {
      // A caller RBAC lets list but not get pods: the upstream list answers as before.
      if (err instanceof ApiError && err.kind === 'Forbidden') {
        if (logger.isDebugEnabled()) {
          logger.debug('pods list answered by the kube-apiserver', { reason: 'get forbidden' });
        }
        return { ...(await upstream.list(request)), source: 'apiserver' };
      }
      throw err;
    }
    const found = items.filter((item): item is KubeObject => item !== undefined);
    const selection = { items: found, totalItems: page.totalItems };
    const versions = found.map((o) => `${o.metadata?.uid ?? ''}:${o.metadata?.resourceVersion ?? ''}`);
    const digest = createHash('sha1')
      .update(JSON.stringify([namespace ?? null, query.canonical, page.totalItems, versions]))
      .digest('base64url')
      .slice(0, 16);
    const etag = `W/"index.${digest}"`;
    if (logger.isDebugEnabled())
      logger.debug('pods list answered by the pod index', {
        items: found.length,
        totalItems: page.totalItems,
      });
    return { etag, source: 'index', body: () => new PreparedBody(etag, listBody(kind, selection)) };
  }

  get(request: GetRequest): Promise<Answer> {
    return this.#options.upstream.get(request);
  }
}
