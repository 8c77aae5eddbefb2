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
import { carriesBody, upstreamPathPrefix } from './upstream-request.ts';
import { UndiciExchange, upstreamHeaders } from './undici-exchange.ts';

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
   * and sent in one write (undici-exchange.ts); larger ones, and streams, are relayed as they arrive.
   */
  collectUpToBytes: number;
  /** Called for every upstream request of a plain request, as it is made (stream tracking). */
  onRequest?(exchange: UndiciExchange, req: http.IncomingMessage, res: http.ServerResponse): void;
  /** More http-proxy plugins, for upgrades (stream tracking). */
  plugins?: Plugin[];
}

/** Forwards shaped, impersonated requests and upgrades to the kube-apiserver and streams the answers back. */
export interface StreamingProxy {
  forward(req: http.IncomingMessage, res: http.ServerResponse, shape: RequestShape): void;
  forwardUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, verb: RequestVerb): void;
}

/**
 * Relays responses and upgrades (exec, attach, port-forward): a timeout only until the upstream answers,
 * upstream latency measured as source="proxy". Plain requests go upstream on undici's pool
 * (undici-exchange.ts), upgrades with http-proxy-middleware over the https.Agent.
 */
export function streamingProxy(options: StreamingOptions): StreamingProxy {
  const { logger } = options;
  const pathPrefix = upstreamPathPrefix(options.upstream.target);
  const observe = (verb: RequestVerb, at: bigint, code: number | 'error') =>
    options.duration
      .series({ source: 'proxy', verb, code: String(code) })
      .observe(Number(process.hrtime.bigint() - at) / 1e9);
  const upstreamTimeout = (proxyReq: http.ClientRequest) =>
    proxyReq.setTimeout(options.responseTimeoutMs, () =>
      proxyReq.destroy(Object.assign(new Error('upstream response timeout'), { code: 'UPSTREAM_TIMEOUT' })),
    );
  const failureOf = (err: Error) => {
    const failure = upstreamFailure(err as NodeJS.ErrnoException, options.responseTimeoutMs);
    logger.warn('kube-apiserver proxy error', {
      error: err.message,
      code: (err as NodeJS.ErrnoException).code,
      status: failure.statusCode,
    });
    return failure;
  };

  const host = new URL(options.upstream.target).host;
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, shape: RequestShape) => {
    const at = process.hrtime.bigint();
    const exchange = new UndiciExchange(res, {
      collectUpTo: shape.oneObjectOrList ? options.collectUpToBytes : 0,
      onAnswer: (status) => observe(shape.verb, at, status),
      onFailure: (err, answered) => {
        if (res.destroyed) return;
        if (answered) {
          options.writeError.response(
            res,
            new ApiError('BadGateway', 'the kube-apiserver broke off its answer'),
          );
          return;
        }
        observe(shape.verb, at, 'error');
        const failure = failureOf(err);
        if (!res.headersSent) options.writeError.response(res, failure);
        else res.destroy();
      },
    });
    const hasBody = carriesBody(req);
    const headers = upstreamHeaders(req, host);
    // As http-proxy did: a DELETE or OPTIONS without a body says so, rather than leave the length open.
    if (
      !hasBody &&
      (req.method === 'DELETE' || req.method === 'OPTIONS') &&
      req.headers['content-length'] === undefined
    )
      headers.push('content-length', '0');
    options.onRequest?.(exchange, req, res);
    // A client that went away does not need the answer (or the rest of it): the kube-apiserver can stop.
    res.once('close', () => exchange.stop());
    // Invalid input (a header undici refuses) comes back through exchange.onResponseError, not as a throw.
    options.upstream.pool.dispatch(
      {
        path: pathPrefix + (req.url ?? '/'),
        method: req.method ?? 'GET',
        headers,
        body: hasBody ? req : null,
        // Until the upstream answers; streams (watch, followed logs) may idle after that.
        headersTimeout: options.responseTimeoutMs,
        bodyTimeout: 0,
      },
      exchange,
    );
  };

  // Upgrades only; their latency until the upgrade or the refusal.
  const started = new WeakMap<http.IncomingMessage, { verb: RequestVerb; at: bigint }>();
  const observeUpgrade = (req: http.IncomingMessage, code: number | 'error') => {
    const state = started.get(req);
    if (!state) return;
    started.delete(req);
    observe(state.verb, state.at, code);
  };
  const events: Plugin = (proxyServer) => {
    proxyServer.on('proxyReqWs', (proxyReq, req) => {
      upstreamTimeout(proxyReq);
      proxyReq.once('upgrade', (proxyRes: http.IncomingMessage) => {
        proxyReq.setTimeout(0);
        observeUpgrade(req, proxyRes.statusCode ?? 101);
      });
      proxyReq.once('response', (proxyRes) => {
        proxyReq.setTimeout(0);
        observeUpgrade(req, proxyRes.statusCode ?? 0);
      });
    });
    proxyServer.on('error', (err, req, socket) => {
      observeUpgrade(req, 'error');
      options.writeError.socket(socket as Duplex, failureOf(err));
    });
  };

  settleLegacyUrlParseWarning();
  const proxy = createProxyMiddleware<http.IncomingMessage, http.ServerResponse>({
    target: proxyTarget(options.upstream.target),
    changeOrigin: true,
    agent: options.upstream.agent,
    secure: options.upstream.verifyTls,
    xfwd: false,
    // Upgrades only: an answer that refuses one is relayed by http-proxy itself.
    ejectPlugins: true,
    plugins: [events, ...(options.plugins ?? [])],
  });

  return {
    forward,
    forwardUpgrade(req, socket, head, verb) {
      started.set(req, { verb, at: process.hrtime.bigint() });
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
