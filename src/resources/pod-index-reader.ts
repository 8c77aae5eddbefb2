import { createHash } from 'node:crypto';
import type { ListQuery } from '../list-query/list-query.ts';
import { unpackPod } from '../nodes/pod-body.ts';
import { podName, type IndexedPod, type PodIndexSource } from '../nodes/pod-cache.ts';
import { BodyMemo, PreparedBody } from '../nodes/prepared-response.ts';
import type { Logger } from '../observability/logger.ts';
import type { Answer, GetRequest, KindReader, ListRequest } from './kind-readers.ts';

/**
 * Pods pages the pod cache can answer: the page is chosen from the cache's per-pod records (no pod is
 * parsed) and answered with their packed bodies. Any query the records cannot answer (labels, owners,
 * status, …) goes to the upstream reader, as the caller, unchanged.
 */

/** At most this many pods are unpacked for a page; larger pages go upstream. */
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
  pods: IndexedPod[];
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
  return { pods: kept.slice(offset), totalItems };
}

export type PodsSource = 'index' | 'apiserver';

export interface PodIndexReaderOptions {
  index: PodIndexSource;
  /** Everything the index cannot answer. */
  upstream: KindReader;
  logger: Logger;
  /** Bound on the page bodies kept for repeated identical pages. */
  memoMaxBytes: number;
}

const OPEN = Buffer.from('{"items":[');
const COMMA = Buffer.from(',');

/**
 * The pods kind: from the pod index where it answers the whole query, else from the kube-apiserver.
 * The index holds each pod as served (packed), so an indexed page is answered from memory alone.
 */
export class PodIndexReader implements KindReader {
  readonly #options: PodIndexReaderOptions;
  /** Page bodies by ETag, which names the page's pods and their versions: never served stale. */
  readonly #bodies: BodyMemo;

  constructor(options: PodIndexReaderOptions) {
    this.#options = options;
    this.#bodies = new BodyMemo({ maxBytes: options.memoMaxBytes });
  }

  /** Why the index cannot answer now: not yet synced, or its watch down (the records may be behind). */
  #unavailable(): string | undefined {
    const { index } = this.#options;
    return !index.synced ? 'not synced' : !index.freshness().connected ? 'watch down' : undefined;
  }

  async list(request: ListRequest): Promise<Answer> {
    const { index, upstream, logger } = this.#options;
    const { namespace, query } = request;
    const unavailable = this.#unavailable();
    if (unavailable !== undefined || !indexAnswers(query)) {
      if (logger.isDebugEnabled()) {
        logger.debug('pods list answered by the kube-apiserver', { reason: unavailable ?? 'query' });
      }
      return { ...(await upstream.list(request)), source: 'apiserver' };
    }
    const node = query.filters.get('nodeName');
    const page = selectIndexPage(index.pods({ namespace, node }), namespace, query);
    const versions = page.pods.map((pod) => `${pod.key}:${pod.resourceVersion}`);
    const digest = createHash('sha1')
      .update(JSON.stringify([namespace ?? null, query.canonical, page.totalItems, versions]))
      .digest('base64url')
      .slice(0, 16);
    const etag = `W/"index.${digest}"`;
    if (logger.isDebugEnabled())
      logger.debug('pods list answered by the pod index', {
        items: page.pods.length,
        totalItems: page.totalItems,
      });
    return {
      etag,
      source: 'index',
      body: () => this.#bodies.get('', etag, etag, () => pageBody(page)),
    };
  }

  /** One pod from the index when it is current (the route has authorized `get`), else as the caller. */
  async get(request: GetRequest): Promise<Answer> {
    const { index, upstream } = this.#options;
    const { namespace, name } = request;
    const pod =
      namespace !== undefined && this.#unavailable() === undefined ? index.pod(namespace, name) : undefined;
    if (!pod) return upstream.get(request);
    const etag = `W/"${pod.resourceVersion}"`;
    return { etag, source: 'index', body: () => new PreparedBody(etag, unpackPod(pod.body)) };
  }
}

/** `{"items":[…],"totalItems":N}` from the page's packed pods. */
function pageBody(page: IndexPage): Buffer {
  const parts: Buffer[] = [OPEN];
  page.pods.forEach((pod, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(unpackPod(pod.body));
  });
  parts.push(Buffer.from(`],"totalItems":${page.totalItems}}`));
  return Buffer.concat(parts);
}
