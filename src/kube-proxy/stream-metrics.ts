import type { Registry } from 'prom-client';
import { counter, gauge } from '../observability/metrics.ts';
import type { StreamEndReason } from './stream-registry.ts';

/**
 * Open proxied connections and those ended because their session did. Returns the registry's
 * `onEnded` callback.
 */
export function createStreamMetrics(
  registry: Registry,
  openConnections: () => number,
): (reason: StreamEndReason) => void {
  gauge(registry, {
    name: 'platform_proxy_open_connections',
    help: 'Proxied requests and upgraded connections (watch, exec, attach, port-forward) open on this replica.',
    collect: (g) => g.set(openConnections()),
  });
  const ended = counter(registry, {
    name: 'platform_proxy_connections_ended_total',
    help: 'Proxied connections this replica closed because their session ended, expired, or their user was disabled or deleted.',
    labelNames: ['reason'],
  });
  return (reason) => ended.inc({ reason });
}
