import https from 'node:https';
import type http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { Pool } from 'undici';
import { groupsToImpersonate, type Identity } from '../kernel/identity.ts';
import { FixedTlsAgent } from './fixed-tls-agent.ts';
import { stripClientCredentials } from './header-hygiene.ts';

/** How the proxy reaches the kube-apiserver: its URL, a TLS agent and the server's own credential. */
export interface Upstream {
  target: string;
  agent: https.Agent;
  /** The same TLS material on undici's keep-alive pool: plain proxied requests (undici-exchange.ts). */
  pool: Pool;
  /** False only when the kubeconfig says to skip certificate verification. */
  verifyTls: boolean;
  /**
   * The server's own `Authorization` value, read per request: in-cluster ServiceAccount tokens rotate. At
   * once while the last read is fresh (nearly every request), else a promise.
   */
  authorization(): Authorization | Promise<Authorization>;
}

type Authorization = string | undefined;

/**
 * How long the server's own credential is reused before the kubeconfig is asked again. Asking costs a
 * decode of the TLS material and an agent lookup per proxied request; a rotated ServiceAccount token is
 * written well before the old one expires, so a second's delay in noticing it is harmless.
 */
const AUTHORIZATION_TTL_MS = 1000;

/**
 * The last answer of `read` for `ttlMs`, at once (not a promise) once it has arrived; a failed read is not
 * kept. At once, because a promise costs every proxied request a turn of the microtask queue.
 */
function memoizeFor<T>(ttlMs: number, read: () => Promise<T>): () => T | Promise<T> {
  type Entry = { value: Promise<T>; settled?: { value: T }; until: number };
  let cached: Entry | undefined;
  return () => {
    const now = performance.now();
    if (cached && now < cached.until) return cached.settled ? cached.settled.value : cached.value;
    const value = read();
    const entry: Entry = { value, until: now + ttlMs };
    cached = entry;
    value.then(
      (settled) => (entry.settled = { value: settled }),
      () => {
        if (cached === entry) cached = undefined;
      },
    );
    return value;
  };
}

/** `responseTimeoutMs` also bounds a new connection's TCP and TLS handshake (the request's own wait comes after it). */
export async function upstreamOf(kubeConfig: KubeConfig, responseTimeoutMs: number): Promise<Upstream> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  // TLS material (CA, client certificate) is fixed for the life of the process.
  const tls: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(tls);
  // The same material for upgrades (the https.Agent) and plain requests (undici's pool).
  const material = {
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    ...(tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
    ...(tls.servername ? { servername: tls.servername } : {}),
  };
  const agent = new FixedTlsAgent({ ...material, keepAlive: true });
  const pool = new Pool(cluster.server, {
    connect: { ...material, timeout: responseTimeoutMs },
    // HTTP/1.1, one request per connection at a time, as nginx proxies: undici would otherwise speak
    // HTTP/2 where the kube-apiserver offers it, and the kube-apiserver spends more CPU per request on
    // its HTTP/2 streams (docs/benchmarks.md, "The proxy").
    allowH2: false,
    // As the https.Agent: connections stay until the kube-apiserver closes them.
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 600_000,
  });
  return {
    target: cluster.server,
    agent,
    pool,
    verifyTls: tls.rejectUnauthorized !== false,
    authorization: memoizeFor(AUTHORIZATION_TTL_MS, async () => {
      const opts: https.RequestOptions = {};
      await kubeConfig.applyToHTTPSOptions(opts);
      const header = (opts.headers as Record<string, string> | undefined)?.['Authorization'];
      if (header) return header;
      if (opts.auth) return `Basic ${Buffer.from(opts.auth).toString('base64')}`;
      return undefined;
    }),
  };
}

/**
 * Makes a request speak as `identity`: every credential-bearing header the client sent (Authorization,
 * Impersonate-*, X-Remote-*, the bearer-token WebSocket subprotocol) is dropped, the server's own
 * credential is set and the caller is impersonated, so Kubernetes RBAC decides. At once while the
 * server's credential is cached; a promise when it has to be read.
 */
export type Impersonate = (req: http.IncomingMessage, identity: Identity) => void | Promise<void>;

/** Impersonation through `upstream`, with each identity's Impersonate-Group values built once. */
export function impersonator(upstream: Upstream): Impersonate {
  // Identities are frozen and shared by a session's requests (the access-token authenticator).
  const groupsByIdentity = new WeakMap<Identity, readonly string[]>();
  const groupsOf = (identity: Identity): readonly string[] => {
    let groups = groupsByIdentity.get(identity);
    if (!groups) {
      groups = Object.freeze(groupsToImpersonate(identity));
      groupsByIdentity.set(identity, groups);
    }
    return groups;
  };
  const set = (req: http.IncomingMessage, identity: Identity, authorization: Authorization) => {
    if (authorization) req.headers['authorization'] = authorization;
    req.headers['impersonate-user'] = identity.username;
    const groups = groupsOf(identity);
    // One header line per group. Shared and frozen: the outgoing request only reads it.
    if (groups.length > 0) req.headers['impersonate-group'] = groups as string[];
  };
  return (req, identity) => {
    stripClientCredentials(req.headers);
    const authorization = upstream.authorization();
    if (authorization instanceof Promise) return authorization.then((value) => set(req, identity, value));
    set(req, identity, authorization);
  };
}
