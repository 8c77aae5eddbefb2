import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { createProxyMiddleware, type Plugin } from 'http-proxy-middleware';
import { ApiError } from '../kernel/api-error.ts';
import type { RequestVerb } from '../observability/api-request-info.ts';
import type { Logger } from '../observability/logger.ts';
import type { SeriesHistogram } from '../observability/series-metrics.ts';
import type { UpstreamLabel } from '../observability/upstream-metrics.ts';
import type { Upstream } from './impersonation.ts';
import { settleLegacyUrlParseWarning } from './legacy-url-parse.ts';
import { upstreamFailure, type RequestShape } from './request-shaping.ts';
import { relayResponse } from './response-relay.ts';

/** Writes an error to the client: on a response, or straight to the socket of an upgrade. */
export interface ErrorWriter {
  response(res: http.ServerResponse, err: ApiError): void;
  socket(socket: Duplex, err: ApiError): void;
}

export interface StreamingOptions {
  upstream: Upstream;
  /** Time allowed for the kube-apiserver to start answering; streams (watch, exec) are not limited once it has. */
  responseTimeoutMs: number;
  duration: SeriesHistogram<UpstreamLabel>;
  logger: Logger;
  writeError: ErrorWriter;
  /**
   * Answers that are one object or one list (request-shaping.ts) and at most this large are collected
   * and sent in one write (response-relay.ts); larger ones, and streams, are relayed as they arrive.
   */
  collectUpToBytes: number;
  /** More http-proxy plugins (stream tracking). */
  plugins?: Plugin[];
}

/** Forwards shaped, impersonated requests and upgrades to the kube-apiserver and streams the answers back. */
export interface StreamingProxy {
  forward(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    next: (err?: unknown) => void,
    shape: RequestShape,
  ): void;
  forwardUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, verb: RequestVerb): void;
}

/**
 * Relays responses (response-relay.ts) and upgrades (exec, attach, port-forward): a timeout only until
 * the upstream answers, upstream latency measured as source="proxy".
 */
export function streamingProxy(options: StreamingOptions): StreamingProxy {
  const { logger } = options;
  const started = new WeakMap<http.IncomingMessage, { verb: RequestVerb; at: bigint; collect: boolean }>();
  const observe = (req: http.IncomingMessage, code: number | 'error') => {
    const state = started.get(req);
    if (!state) return;
    started.delete(req);
    options.duration
      .series({ source: 'proxy', verb: state.verb, code: String(code) })
      .observe(Number(process.hrtime.bigint() - state.at) / 1e9);
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
      const collect = started.get(req)?.collect ?? false;
      observe(req, proxyRes.statusCode ?? 0);
      relayResponse(proxyRes, res, {
        collectUpTo: collect ? options.collectUpToBytes : 0,
        onBroken: () =>
          options.writeError.response(
            res,
            new ApiError('BadGateway', 'the kube-apiserver broke off its answer'),
          ),
      });
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

  settleLegacyUrlParseWarning();
  const proxy = createProxyMiddleware<http.IncomingMessage, http.ServerResponse>({
    target: proxyTarget(options.upstream.target),
    changeOrigin: true,
    agent: options.upstream.agent,
    secure: options.upstream.verifyTls,
    xfwd: false,
    // Status, headers and body are relayed by response-relay.ts.
    selfHandleResponse: true,
    ejectPlugins: true,
    plugins: [events, ...(options.plugins ?? [])],
  });

  return {
    forward(req, res, next, shape) {
      started.set(req, { verb: shape.verb, at: process.hrtime.bigint(), collect: shape.oneObjectOrList });
      void proxy(req, res, next);
    },
    forwardUpgrade(req, socket, head, verb) {
      started.set(req, { verb, at: process.hrtime.bigint(), collect: false });
      proxy.upgrade(req, socket as never, head);
    },
  };
}

/**
 * The upstream in the shape http-proxy reads (the legacy url fields), built once: a string target is
 * parsed again with the legacy `url.parse` for every request.
 */
function proxyTarget(target: string) {
  const url = new URL(target);
  return {
    protocol: url.protocol,
    host: url.host,
    // The legacy parser gives an IPv6 literal without brackets, which is what a socket connect needs.
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port,
    pathname: url.pathname,
    path: url.pathname + url.search,
    href: url.href,
  };
}
