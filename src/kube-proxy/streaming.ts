import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { createProxyMiddleware, type Plugin } from 'http-proxy-middleware';
import type { Histogram } from 'prom-client';
import type { ApiError } from '../kernel/api-error.ts';
import type { RequestVerb } from '../observability/api-request-info.ts';
import type { Logger } from '../observability/logger.ts';
import type { UpstreamLabel } from '../observability/upstream-metrics.ts';
import type { Upstream } from './impersonation.ts';
import { upstreamFailure } from './request-shaping.ts';

/** Writes an error to the client: on a response, or straight to the socket of an upgrade. */
export interface ErrorWriter {
  response(res: http.ServerResponse, err: ApiError): void;
  socket(socket: Duplex, err: ApiError): void;
}

export interface StreamingOptions {
  upstream: Upstream;
  /** Time allowed for the kube-apiserver to start answering; streams (watch, exec) are not limited once it has. */
  responseTimeoutMs: number;
  duration: Histogram<UpstreamLabel>;
  logger: Logger;
  writeError: ErrorWriter;
  /** More http-proxy plugins (stream tracking). */
  plugins?: Plugin[];
}

/** Forwards shaped, impersonated requests and upgrades to the kube-apiserver and streams the answers back. */
export interface StreamingProxy {
  forward(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    next: (err?: unknown) => void,
    verb: RequestVerb,
  ): void;
  forwardUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, verb: RequestVerb): void;
}

/**
 * One socket write per event-loop turn instead of one per upstream chunk. The kube-apiserver sends a
 * list in 2 kB HTTP chunks that arrive together in one read; piped as they come, a 27 kB page took a
 * dozen writes to the client (headers, each chunk, the terminator), each a system call that wakes the
 * reader. Corked until the turn ends, they leave as one. Streams are not held back: whatever arrived is
 * flushed at the end of the turn it arrived in, and a finished response uncorks itself (res.end()).
 */
function coalesceWrites(upstream: http.IncomingMessage, res: http.ServerResponse): void {
  // The socket, not the response: ServerResponse.uncork() sends its buffered chunks one write each.
  const socket = res.socket;
  if (!socket) return;
  let corked = false;
  const cork = () => {
    if (corked || res.writableEnded || socket.destroyed) return;
    corked = true;
    socket.cork();
    setImmediate(() => {
      corked = false;
      // res.end() has flushed and fully uncorked the socket, which may already serve the next request.
      if (!res.writableEnded && !socket.destroyed) socket.uncork();
    });
  };
  cork(); // the status line and headers, written with the first chunks
  upstream.on('data', cork);
  res.once('close', () => upstream.off('data', cork));
}

/**
 * Streams responses (watch, follow=true logs) and upgrades (exec, attach, port-forward): a timeout
 * only until the upstream answers, headers flushed at once for bodies without a length, upstream
 * latency measured as source="proxy".
 */
export function streamingProxy(options: StreamingOptions): StreamingProxy {
  const { logger } = options;
  const started = new WeakMap<http.IncomingMessage, { verb: RequestVerb; at: bigint }>();
  const observe = (req: http.IncomingMessage, code: number | 'error') => {
    const state = started.get(req);
    if (!state) return;
    started.delete(req);
    options.duration.observe(
      { source: 'proxy', verb: state.verb, code: String(code) },
      Number(process.hrtime.bigint() - state.at) / 1e9,
    );
  };
  const upstreamTimeout = (proxyReq: http.ClientRequest) =>
    proxyReq.setTimeout(options.responseTimeoutMs, () => {
      proxyReq.destroy(Object.assign(new Error('upstream response timeout'), { code: 'UPSTREAM_TIMEOUT' }));
    });

  const events: Plugin = (proxyServer) => {
    proxyServer.on('proxyReq', (proxyReq) => {
      // Until the upstream answers, a silent connection is a failure; after that, streams may idle.
      upstreamTimeout(proxyReq);
      proxyReq.once('response', () => proxyReq.setTimeout(0));
    });
    proxyServer.on('proxyReqWs', (proxyReq) => {
      upstreamTimeout(proxyReq);
      proxyReq.once('upgrade', () => proxyReq.setTimeout(0));
      proxyReq.once('response', () => proxyReq.setTimeout(0));
    });
    proxyServer.on('proxyRes', (proxyRes, req, res) => {
      observe(req, proxyRes.statusCode ?? 0);
      coalesceWrites(proxyRes, res);
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
      const failure = upstreamFailure(err as NodeJS.ErrnoException, options.responseTimeoutMs);
      observe(req, 'error');
      logger.warn('kube-apiserver proxy error', {
        error: (err as Error).message,
        code: (err as NodeJS.ErrnoException).code,
        status: failure.statusCode,
      });
      const res = target as http.ServerResponse | Duplex;
      if ('writeHead' in res) {
        if (!res.headersSent) options.writeError.response(res, failure);
        else res.destroy();
      } else {
        options.writeError.socket(res, failure);
      }
    });
  };

  const proxy = createProxyMiddleware<http.IncomingMessage, http.ServerResponse>({
    target: options.upstream.target,
    changeOrigin: true,
    agent: options.upstream.agent,
    secure: options.upstream.verifyTls,
    xfwd: false,
    ejectPlugins: true,
    plugins: [events, ...(options.plugins ?? [])],
  });

  return {
    forward(req, res, next, verb) {
      started.set(req, { verb, at: process.hrtime.bigint() });
      void proxy(req, res, next);
    },
    forwardUpgrade(req, socket, head, verb) {
      started.set(req, { verb, at: process.hrtime.bigint() });
      proxy.upgrade(req, socket as never, head);
    },
  };
}
