import type { Registry } from 'prom-client';
import { counter, gauge, histogram } from '../observability/metrics.ts';

export type ReconcileResult = 'success' | 'error';
export type LeaderChange = 'acquired' | 'lost' | 'released';

export interface ReconcileMetrics {
  /** One key handled by a reconciler. */
  observe(reconciler: string, result: ReconcileResult, seconds: number): void;
  /** Reports a queue's depth at every scrape (the latest queue of a reconciler replaces the previous). */
  trackQueue(reconciler: string, depth: () => number): void;
  leaderChange(change: LeaderChange): void;
}

/** Metrics of leader election and of the reconcilers run by the leader. Register once per registry. */
export function createReconcileMetrics(registry: Registry, isLeader: () => boolean): ReconcileMetrics {
  const queues = new Map<string, () => number>();
  gauge(registry, {
    name: 'platform_leader_is_leader',
    help: '1 while this replica holds the leader lease and runs the reconcilers.',
    collect: (g) => g.set(isLeader() ? 1 : 0),
  });
  const changes = counter(registry, {
    name: 'platform_leader_changes_total',
    help: 'Leadership changes of this replica: acquired, lost (not renewed in time) or released (on stop).',
    labelNames: ['change'],
  });
  const reconciles = counter(registry, {
    name: 'platform_reconcile_total',
    help: 'Keys handled by a reconciler, by result (success, error: retried with back-off).',
    labelNames: ['reconciler', 'result'],
  });
  const duration = histogram(registry, {
    name: 'platform_reconcile_duration_seconds',
    help: 'Time to handle one key, requests to the kube-apiserver included.',
    labelNames: ['reconciler'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
  gauge(registry, {
    name: 'platform_reconcile_queue_depth',
    help: 'Keys waiting to be handled (queued or waiting for a retry) while leading.',
    labelNames: ['reconciler'],
    collect: (g) => {
      g.reset();
      for (const [reconciler, depth] of queues) g.set({ reconciler }, depth());
    },
  });
  return {
    observe(reconciler, result, seconds) {
      reconciles.inc({ reconciler, result });
      duration.observe({ reconciler }, seconds);
    },
    trackQueue(reconciler, depth) {
      queues.set(reconciler, depth);
    },
    leaderChange(change) {
      changes.inc({ change });
    },
  };
}
