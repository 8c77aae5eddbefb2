import type { Counter, Registry } from 'prom-client';
import { counter, gauge } from '../observability/metrics.ts';

/** What the cache metrics read from each informer. */
interface TrackedCache {
  readonly kind: string;
  readonly size: number;
  readonly synced: boolean;
  readonly lastEventAt: number;
  freshness(): { connected: boolean; staleSeconds: number };
}

/** A count of events of one cache, labelled by its kind. */
export interface KindCounter {
  inc(labels: { kind: string }): void;
}

export interface CacheMetrics {
  relists: KindCounter;
  restarts: KindCounter;
  track(cache: TrackedCache): void;
}

export interface CacheMetricsOptions {
  now?: () => number;
  /**
   * Put before every kind: a thread with caches of its own (the login thread's users and sessions) tells
   * them apart from the main thread's caches of the same kinds.
   */
  kindPrefix?: string;
}

/** Metrics of every watch-backed cache, labelled by kind. Register once per registry. */
export function createCacheMetrics(registry: Registry, options: CacheMetricsOptions = {}): CacheMetrics {
  const now = options.now ?? Date.now;
  const prefix = options.kindPrefix ?? '';
  const caches: TrackedCache[] = [];
  const perCache = (name: string, help: string, read: (c: TrackedCache) => number) =>
    gauge(registry, {
      name,
      help,
      labelNames: ['kind'],
      collect: (g) => {
        g.reset();
        for (const cache of caches) g.set({ kind: prefix + cache.kind }, read(cache));
      },
    });
  perCache('platform_cache_objects', 'Objects held in the watch-backed cache.', (c) => c.size);
  perCache('platform_cache_synced', '1 once the cache has completed its first list.', (c) =>
    c.synced ? 1 : 0,
  );
  perCache(
    'platform_cache_watch_connected',
    '1 while the cache follows the kube-apiserver: from a list or an open watch until a request fails.',
    (c) => (c.freshness().connected ? 1 : 0),
  );
  perCache(
    'platform_cache_stale_seconds',
    'Seconds since the cache was last known current; 0 while it follows the kube-apiserver.',
    (c) => c.freshness().staleSeconds,
  );
  perCache(
    'platform_cache_last_event_age_seconds',
    'Seconds since the cache last received a watch event, bookmark or list.',
    (c) => (c.lastEventAt ? (now() - c.lastEventAt) / 1000 : -1),
  );
  const prefixed = (c: Counter<'kind'>): KindCounter =>
    prefix ? { inc: ({ kind }) => c.inc({ kind: prefix + kind }) } : c;
  return {
    relists: prefixed(
      counter(registry, {
        name: 'platform_cache_relists_total',
        help: 'Full lists of a kind (first sync, 410 Gone, recovery).',
        labelNames: ['kind'],
      }),
    ),
    restarts: prefixed(
      counter(registry, {
        name: 'platform_cache_watch_restarts_total',
        help: 'Watches restarted after an error.',
        labelNames: ['kind'],
      }),
    ),
    track(cache) {
      caches.push(cache);
    },
  };
}
