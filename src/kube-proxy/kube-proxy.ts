import https from 'node:https';
import { STATUS_CODES } from 'node:http';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { KubeConfig } from '@kubernetes/client-node';
import { Router, type RequestHandler } from 'express';
import { createProxyMiddleware, type Plugin } from 'http-proxy-middleware';
import type { Registry } from 'prom-client';
import { identityOf, type Identity } from '../kernel/identity.ts';
import { setRouteTemplate } from '../http/route-template.ts';
import { statusFor, type KubeStatus } from '../http/status.ts';
import { isWatchQuery, requestVerb, type RequestVerb } from '../observability/api-request-info.ts';
import type { Logger } from '../observability/logger.ts';
import { upstreamRequestDuration } from '../observability/upstream-metrics.ts';
import { safeKubeSegments, UnsafePathError } from './kube-api-path.ts';

/** Turns a bearer token into an identity; throws when the token is not acceptable. */
export type TokenAuthenticator = (token: string) => Promise<Identity>;

export interface KubeProxyOptions {
  kubeConfig: KubeConfig;
  logger: Logger;
  registry: Registry;
  /** Time allowed for the kube-apiserver to start answering; streams (watch, exec) are not limited once it has. */
  responseTimeoutMs: number;
  /** Authenticates WebSocket upgrades, which do not pass through the express middleware chain. */
  authenticate: TokenAuthenticator;
}

export interface KubeProxy {
  /** Express handler for /api and /apis (mounted behind bearer authentication). */
  handler: RequestHandler;
  /** For the HTTP server's 'upgrade' event (exec, attach, port-forward, WebSocket watch). */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
}

const KUBE_PROTOCOL_TOKEN_PREFIX = 'base64url.bearer.authorization.k8s.io.';

interface ProxyState {
  verb: RequestVerb;
  startedAt: bigint;
}

/**
 * Proxies the Kubernetes API as the calling user: the request goes upstream with the server's own
 * credentials plus Impersonate-User/Impersonate-Group, so Kubernetes RBAC decides. Whatever the
 * client sent in Authorization or Impersonate-* never reaches the kube-apiserver.
 */
export async function createKubeProxy(options: KubeProxyOptions): Promise<KubeProxy> {
  const { kubeConfig, logger } = options;
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');

  // TLS material (CA, client certificate) is fixed for the life of the process; the bearer credential
  // is read per request because in-cluster ServiceAccount tokens rotate.
  const tls: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(tls);
  const agent = new https.Agent({
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    ...(tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
    ...(tls.servername ? { servername: tls.servername } : {}),
    keepAlive: true,
  });
  const upstreamAuthorization = async (): Promise<string | undefined> => {
    const opts: https.RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(opts);
    const header = (opts.headers as Record<string, string> | undefined)?.['Authorization'];
    if (header) return header;
    if (opts.auth) return `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    return undefined;
  };

  // Shared with the client-side instrumentation: source="proxy" tells the two apart.
  const duration = upstreamRequestDuration(options.registry);
  const states = new WeakMap<http.IncomingMessage, ProxyState>();
  const observe = (req: http.IncomingMessage, code: number | 'error') => {
    const state = states.get(req);
    if (!state) return;
    states.delete(req);
    duration.observe(
      { source: 'proxy', verb: state.verb, code: String(code) },
      Number(process.hrtime.bigint() - state.startedAt) / 1e9,
    );
  };

  const events: Plugin = (proxyServer) => {
    proxyServer.on('proxyReq', (proxyReq) => {
      // Until the upstream answers, a silent connection is a failure; after that, streams may idle.
      proxyReq.setTimeout(options.responseTimeoutMs, () => {
        proxyReq.destroy(Object.assign(new Error('upstream response timeout'), { code: 'UPSTREAM_TIMEOUT' }));
      });
      proxyReq.once('response', () => proxyReq.setTimeout(0));
    });
    proxyServer.on('proxyReqWs', (proxyReq) => {
      proxyReq.setTimeout(options.responseTimeoutMs, () => {
        proxyReq.destroy(Object.assign(new Error('upstream response timeout'), { code: 'UPSTREAM_TIMEOUT' }));
      });
      proxyReq.once('upgrade', () => proxyReq.setTimeout(0));
      proxyReq.once('response', () => proxyReq.setTimeout(0));
    });
    proxyServer.on('proxyRes', (proxyRes, req, res) => {
      observe(req, proxyRes.statusCode ?? 0);
      // A response without Content-Length streams (watch, follow=true logs). Node holds headers until
      // the first body byte, so a quiet watch would look hung to the client: send them now, once
      // http-proxy has copied status and headers (synchronously, right after this event).
      if (proxyRes.headers['content-length'] === undefined) {
        process.nextTick(() => {
          if (!res.writableEnded) res.flushHeaders();
        });
      }
    });
    proxyServer.on('error', (err, req, target) => {
      const status = upstreamFailure(err as NodeJS.ErrnoException, options.responseTimeoutMs);
      observe(req, 'error');
      logger.warn('kube-apiserver proxy error', {
        error: (err as Error).message,
        code: (err as NodeJS.ErrnoException).code,
        status: status.code,
      });
      const res = target as http.ServerResponse | Duplex;
      if ('writeHead' in res) {
        if (!res.headersSent)
          res.writeHead(status.code, { 'Content-Type': 'application/json' }).end(JSON.stringify(status));
        else res.destroy();
      } else {
        writeRawStatus(res, status);
      }
    });
  };

  const proxy = createProxyMiddleware<http.IncomingMessage, http.ServerResponse>({
    target: cluster.server,
    changeOrigin: true,
    agent,
    secure: tls.rejectUnauthorized !== false,
    xfwd: false,
    ejectPlugins: true,
    plugins: [events],
  });

  /** Replaces every credential-bearing header with the server's own plus the impersonation of `identity`. */
  const rewriteHeaders = async (req: http.IncomingMessage, identity: Identity) => {
    for (const name of Object.keys(req.headers)) {
      if (name === 'authorization' || name.startsWith('impersonate-')) delete req.headers[name];
    }
    const authorization = await upstreamAuthorization();
    if (authorization) req.headers['authorization'] = authorization;
    req.headers['impersonate-user'] = identity.username;
    req.headers['impersonate-group'] = [...identity.groups]; // one header line per group
  };

  const checkPath = (req: http.IncomingMessage): { verb: RequestVerb } => {
    const url = new URL(req.url ?? '/', 'http://placeholder');
    const rawPath = (req.url ?? '/').split('?')[0] ?? '/';
    safeKubeSegments(rawPath);
    return { verb: requestVerb(req.method ?? 'GET', rawPath, isWatchQuery(url.searchParams.get('watch'))) };
  };

  const handler: RequestHandler = (req, res, next) => {
    // Logs and HTTP metrics see the template, never the client-chosen path.
    setRouteTemplate(
      res,
      req.path.startsWith('/apis') ? '/apis/*' : req.path.startsWith('/openapi') ? '/openapi/*' : '/api/*',
    );
    let verb: RequestVerb;
    try {
      ({ verb } = checkPath(req));
    } catch (err) {
      if (err instanceof UnsafePathError) {
        res.status(400).json(statusFor(400, `invalid Kubernetes API path: ${err.message}`));
        return;
      }
      next(err);
      return;
    }
    states.set(req, { verb, startedAt: process.hrtime.bigint() });
    rewriteHeaders(req, identityOf(res)).then(() => proxy(req, res, next), next);
  };

  const upgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (status: KubeStatus, extraHeaders: Record<string, string> = {}) =>
      writeRawStatus(socket, status, extraHeaders);
    let verb: RequestVerb;
    try {
      ({ verb } = checkPath(req));
    } catch (err) {
      refuse(
        statusFor(
          err instanceof UnsafePathError ? 400 : 404,
          err instanceof UnsafePathError ? `invalid Kubernetes API path: ${err.message}` : 'not found',
        ),
      );
      return;
    }
    const token = bearerFromUpgrade(req);
    if (!token) {
      refuse(statusFor(401, 'Unauthorized: a bearer token is required'), { 'WWW-Authenticate': 'Bearer' });
      return;
    }
    options
      .authenticate(token)
      .then(async (identity) => {
        states.set(req, { verb, startedAt: process.hrtime.bigint() });
        await rewriteHeaders(req, identity);
        proxy.upgrade(req, socket as never, head);
      })
      .catch((err: unknown) => {
        logger.info('websocket upgrade refused', { reason: (err as Error).message });
        refuse(statusFor(401, `Unauthorized: ${(err as Error).message}`), {
          'WWW-Authenticate': 'Bearer error="invalid_token"',
        });
      });
  };

  return { handler, upgrade };
}

/**
 * True for the paths the proxy owns: /api, /apis and the cluster's OpenAPI documents /openapi/v2 and
 * /openapi/v3 (this server's own document is /openapi/platform/v3).
 */
export function isKubeApiPath(path: string): boolean {
  return (
    path === '/api' ||
    path === '/apis' ||
    path.startsWith('/api/') ||
    path.startsWith('/apis/') ||
    path === '/openapi/v2' ||
    path === '/openapi/v3' ||
    path.startsWith('/openapi/v3/')
  );
}

/**
 * The proxy as a router-level middleware that leaves req.url whole (mounting at '/api' would strip the
 * prefix the upstream needs).
 */
export function kubeProxyRoutes(proxy: KubeProxy): Router {
  return Router().use((req, res, next) => (isKubeApiPath(req.path) ? proxy.handler(req, res, next) : next()));
}

/**
 * The caller's token on an upgrade: `Authorization: Bearer …`, or — browsers cannot set headers on a
 * WebSocket — the Kubernetes subprotocol `base64url.bearer.authorization.k8s.io.<token>`, which is then
 * removed so the upstream never sees it.
 */
function bearerFromUpgrade(req: http.IncomingMessage): string | undefined {
  const header = req.headers['authorization'];
  const match = header ? /^Bearer +(\S+) *$/i.exec(header) : null;
  if (match) return match[1];
  const protocols = (req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const carrier = protocols.find((p) => p.startsWith(KUBE_PROTOCOL_TOKEN_PREFIX));
  if (!carrier) return undefined;
  const rest = protocols.filter((p) => p !== carrier);
  if (rest.length > 0) req.headers['sec-websocket-protocol'] = rest.join(', ');
  else delete req.headers['sec-websocket-protocol'];
  try {
    return Buffer.from(carrier.slice(KUBE_PROTOCOL_TOKEN_PREFIX.length), 'base64url').toString('utf8');
  } catch {
    return undefined;
  }
}

function upstreamFailure(err: NodeJS.ErrnoException, responseTimeoutMs: number): KubeStatus {
  switch (err.code) {
    case 'UPSTREAM_TIMEOUT':
    case 'ETIMEDOUT':
      return statusFor(504, `the kube-apiserver did not answer within ${responseTimeoutMs} ms`);
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return statusFor(503, 'the kube-apiserver is unreachable');
    default:
      return statusFor(502, 'the connection to the kube-apiserver failed');
  }
}

/** An HTTP response written straight to a socket (upgrade requests have no ServerResponse). */
function writeRawStatus(socket: Duplex, status: KubeStatus, extraHeaders: Record<string, string> = {}): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(status);
  const headers = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    ...extraHeaders,
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  socket.end(`HTTP/1.1 ${status.code} ${STATUS_CODES[status.code] ?? 'Error'}\r\n${head}\r\n\r\n${body}`);
}
