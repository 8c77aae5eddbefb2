import { createHash } from 'node:crypto';
import type https from 'node:https';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';

/** The part of KubeConfig this module replaces: private in the typings, called by applySecurityAuthentication. */
interface DispatcherFactory {
  createDispatcher?: (cluster: Cluster | null, agentOptions: https.AgentOptions) => Dispatcher | undefined;
}

/**
 * One keep-alive connection pool for every request the server itself makes to the kube-apiserver
 * (informers' lists and watches, SubjectAccessReviews, users and sessions). @kubernetes/client-node 2.x
 * builds a new undici Agent — a new pool — for every request (KubeConfig.applySecurityAuthentication →
 * createDispatcher), so each call pays a TCP and TLS handshake and leaves an idle connection behind.
 * Here the dispatcher is built once per distinct TLS material and then shared; when the material changes
 * (a rotated client certificate or CA) a new pool replaces the old one, which closes once its requests end.
 *
 * Returns false when the library no longer has the method (an upgrade changed it): the caller logs it, and
 * requests still work, one pool each, as before.
 */
export function shareKubeDispatcher(kc: KubeConfig): boolean {
  const factory = kc as unknown as DispatcherFactory;
  const original = factory.createDispatcher;
  if (typeof original !== 'function') return false;
  const create = original.bind(kc);
  let current: { key: string; dispatcher: Dispatcher | undefined } | undefined;
  factory.createDispatcher = (cluster, agentOptions) => {
    const key = materialKey(kc.createDispatcherOptions(cluster, agentOptions));
    if (current?.key === key) return current.dispatcher;
    const previous = current?.dispatcher;
    current = { key, dispatcher: create(cluster, agentOptions) };
    // Graceful: requests in flight on the old pool finish first.
    void previous?.close().catch(() => {});
    return current.dispatcher;
  };
  return true;
}

/** A digest of the dispatcher options: TLS material, proxy URI, type. The material is never kept in clear. */
export function materialKey(options: unknown): string {
  const hash = createHash('sha256');
  const walk = (value: unknown): void => {
    if (Buffer.isBuffer(value)) hash.update(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        hash.update(`|${k}=`);
        walk(v);
      }
    } else hash.update(String(value));
  };
  walk(options);
  return hash.digest('hex');
}
