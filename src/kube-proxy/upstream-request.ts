import http from 'node:http';
import https from 'node:https';

/** Where proxied requests go: the kube-apiserver's URL, taken apart once. */
export interface UpstreamTarget {
  request: typeof https.request;
  hostname: string;
  port: string;
  /** The Host header: host and port as the URL names them. */
  host: string;
  /** The URL's path without its trailing slash ('' for `https://host:6443`), put before every request's path. */
  pathPrefix: string;
}

export function upstreamTarget(target: string): UpstreamTarget {
  const url = new URL(target);
  return {
    request: url.protocol === 'http:' ? http.request : https.request,
    // A socket connects to an IPv6 literal without its brackets.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port,
    host: url.host,
    pathPrefix: url.pathname.replace(/\/+$/, ''),
  };
}

/**
 * Sends a client's request on to the kube-apiserver, its headers already impersonated (impersonation.ts)
 * and its path checked (request-shaping.ts): the same method, path and headers, with the upstream's Host,
 * over `agent`'s kept-alive connections. A body is streamed, never buffered; a request without one is
 * sent at once.
 *
 * Why not http-proxy-middleware for these: per request it awaits three promises, copies its options
 * twice, parses the URL with the legacy parser, pipes even a bodiless GET through the stream machinery,
 * and hands every event through two emitters to plugins. That was about a third of our CPU per proxied
 * request above the smallest Node proxy (docs/benchmarks.md, "The proxy"). WebSocket upgrades still go
 * through it (streaming.ts).
 */
export function openUpstreamRequest(
  target: UpstreamTarget,
  agent: http.Agent,
  req: http.IncomingMessage,
): http.ClientRequest {
  const headers = req.headers;
  headers.host = target.host;
  const hasBody = carriesBody(req);
  // As http-proxy did: a DELETE or OPTIONS without a body says so, rather than leave the length open.
  if (!hasBody && (req.method === 'DELETE' || req.method === 'OPTIONS')) headers['content-length'] = '0';
  const proxyReq = target.request({
    hostname: target.hostname,
    port: target.port,
    method: req.method,
    path: target.pathPrefix + (req.url ?? '/'),
    headers,
    agent,
  });
  if (hasBody) {
    req.on('error', (err) => proxyReq.destroy(err));
    req.pipe(proxyReq);
  } else {
    proxyReq.end();
  }
  return proxyReq;
}

/** The request has a body to stream upstream (a length above zero, or chunks). */
export function carriesBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
