import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../observability/logger.ts';
import type { CacheMetrics } from './cache-metrics.ts';
import { Informer, kubeWatch, type WatchFn } from './informer.ts';
import { kubeRequestBytes } from './kube-request.ts';
import { eachListItem } from './list-items.ts';

/** What a slim cache keeps of an object: its store key (`namespace/name`, or the name) and version. */
export interface SlimRecord {
  readonly key: string;
  readonly resourceVersion: string;
}

export interface SlimInformerOptions<Raw, Slim extends SlimRecord> {
  /** Label for logs and metrics, e.g. "persistentvolumeclaims". */
  kind: string;
  /** The collection, e.g. /api/v1/persistentvolumeclaims. */
  path: string;
  kubeConfig: KubeConfig;
  /** What is kept of each object; the object itself is dropped at once. */
  slim: (object: Raw) => Slim;
  logger: Logger;
  metrics?: CacheMetrics;
  /** Objects per LIST page: a relist never holds more than one page of whole objects. */
  pageSize?: number;
  listTimeoutMs?: number;
}

/** The record's store key from an object's metadata, as the informer keys objects. */
export function slimKey(metadata: { name?: string; namespace?: string } | undefined): string {
  const name = metadata?.name ?? '';
  return metadata?.namespace ? `${metadata.namespace}/${name}` : name;
}

/**
 * A watch-backed cache that keeps only a small record per object, for caches that count or index
 * objects rather than serve them: LIST pages are read item by item (list-items.ts) and watch events
 * turned into records before the informer stores them.
 */
export function slimInformer<Raw, Slim extends SlimRecord>(
  options: SlimInformerOptions<Raw, Slim>,
): Informer<Slim> {
  const { kubeConfig, path, slim } = options;
  const pageSize = options.pageSize ?? 500;
  const listTimeoutMs = options.listTimeoutMs ?? 60_000;
  return new Informer<Slim>({
    kind: options.kind,
    list: async () => {
      const items: Slim[] = [];
      let resourceVersion: string | undefined;
      let continueToken = '';
      do {
        const query = new URLSearchParams({ limit: String(pageSize) });
        if (continueToken) query.set('continue', continueToken);
        const bytes = await kubeRequestBytes(kubeConfig, `${path}?${query}`, { timeoutMs: listTimeoutMs });
        const page = eachListItem<Raw>(bytes, (object) => items.push(slim(object)));
        // Every page of a continued list is the same snapshot; the first names it.
        resourceVersion ??= page.resourceVersion;
        continueToken = page.continue ?? '';
      } while (continueToken);
      return { items, metadata: { resourceVersion: resourceVersion ?? '' } };
    },
    watch: slimWatch(kubeWatch(kubeConfig, path), slim),
    keyOf: (record) => record.key,
    versionOf: (record) => record.resourceVersion,
    logger: options.logger,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
}

/** The watch, handing the informer records instead of objects (bookmarks and errors unchanged). */
function slimWatch<Raw, Slim>(watch: WatchFn, slim: (object: Raw) => Slim): WatchFn {
  return (query, onEvent, onDone) =>
    watch(
      query,
      (event) => {
        const objectEvent = event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED';
        onEvent(objectEvent ? { type: event.type, object: slim(event.object as Raw) } : event);
      },
      onDone,
    );
}
