import https from 'node:https';
import type http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { groupsToImpersonate, type Identity } from '../kernel/identity.ts';
import { FixedTlsAgent } from './fixed-tls-agent.ts';
import { stripClientCredentials } from './header-hygiene.ts';

/** How the proxy reaches the kube-apiserver: its URL, a TLS agent and the server's own credential. */
export interface Upstream {
  target: string;
  agent: https.Agent;
  /** False only when the kubeconfig says to skip certificate verification. */
  verifyTls: boolean;
  /** The server's own `Authorization` value, read per request: in-cluster ServiceAccount tokens rotate. */
  authorization(): Promise<string | undefined>;
}

/**
 * How long the server's own credential is reused before the kubeconfig is asked again. Asking costs a
 * decode of the TLS material and an agent lookup per proxied request; a rotated ServiceAccount token is
 * written well before the old one expires, so a second's delay in noticing it is harmless.
 */
const AUTHORIZATION_TTL_MS = 1000;

/** The last answer of `read` for `ttlMs`; a failed read is not kept. */
function memoizeFor<T>(ttlMs: number, read: () => Promise<T>): () => Promise<T> {
  let cached: { value: Promise<T>; until: number } | undefined;
  return () => {
    const now = performance.now();
    if (cached && now < cached.until) return cached.value;
    const value = read();
    const entry = { value, until: now + ttlMs };
    cached = entry;
    value.catch(() => {
      if (cached === entry) cached = undefined;
    });
    return value;
  };
}

export async function upstreamOf(kubeConfig: KubeConfig): Promise<Upstream> {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  // TLS material (CA, client certificate) is fixed for the life of the process.
  const tls: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(tls);
  const agent = new FixedTlsAgent({
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    ...(tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
    ...(tls.servername ? { servername: tls.servername } : {}),
    keepAlive: true,
  });
  return {
    target: cluster.server,
    agent,
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
 * Makes the request speak as `identity`: every credential-bearing header the client sent
 * (Authorization, Impersonate-*, X-Remote-*, the bearer-token WebSocket subprotocol) is dropped, the server's own credential is set and the caller is
 * impersonated, so Kubernetes RBAC decides.
 */
export async function impersonate(
  req: http.IncomingMessage,
  identity: Identity,
  upstream: Upstream,
): Promise<void> {
  stripClientCredentials(req.headers);
  const authorization = await upstream.authorization();
  if (authorization) req.headers['authorization'] = authorization;
  req.headers['impersonate-user'] = identity.username;
  const groups = groupsToImpersonate(identity);
  if (groups.length > 0) req.headers['impersonate-group'] = groups; // one header line per group
}
