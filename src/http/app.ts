import express, { type Express, type RequestHandler, type Router } from 'express';
import type { AccessLogPolicy } from '../observability/access-log-policy.ts';
import { mayNameWatch } from '../observability/api-request-info.ts';
import type { HttpMetrics } from '../observability/http-metrics.ts';
import type {
  Logger,
  RequestContext as RequestLogContext,
  RequestContextStore,
} from '../observability/logger.ts';
import { errorHandler, notFoundHandler } from './error-mapper.ts';
import { middlewareChain } from './middleware-chain.ts';
import { routedByPath } from './path-guard.ts';
import { requestContext, type RequestContext } from './request-context.ts';
import { requestIdFrom } from './request-id.ts';
import { duplicateAuthorization } from './single-authorization.ts';
import { routeTemplate } from './route-template.ts';

export { routeTemplate, setRouteTemplate } from './route-template.ts';

export interface AppDependencies {
  logger: Logger;
  requestContext: RequestContextStore;
  /** Routers mounted before authentication: probes, token endpoint, discovery documents. */
  publicRoutes: Router[];
  /** Authenticates the caller; everything mounted after it requires a valid identity. */
  authenticate?: RequestHandler;
  /** Routers that need an authenticated caller. */
  protectedRoutes: Router[];
  /** Request count and latency by verb, group, version, resource, route and code. */
  httpMetrics?: HttpMetrics;
  /**
   * Addresses/CIDR ranges (validated by the config) of reverse proxies whose X-Forwarded-For
   * names the client. Empty or absent: `req.ip` is always the TCP peer, so a client cannot
   * claim another address by sending the header itself.
   */
  trustedProxies?: readonly string[];
  /** Answers 405 + Allow for a known path asked with another method (after every router, before the 404). */
  methodNotAllowed?: RequestHandler;
  /** Which requests get an access line (observability/access-log-policy.ts); absent: every request. */
  accessLog?: AccessLogPolicy;
}

/**
 * What every log line written while serving a request carries: its id, and from authentication on its
 * caller. A class, so the getter lives on its prototype: V8 builds an object literal with a getter in
 * dictionary mode, and one such object per request made a node page cost 1.8 times the CPU (measured).
 */
class LogContext implements RequestLogContext {
  readonly requestId: string;
  readonly #request: RequestContext;

  constructor(requestId: string, request: RequestContext) {
    this.requestId = requestId;
    this.#request = request;
  }

  get user(): string | undefined {
    return this.#request.identity?.username;
  }
}

/** Longer paths are cut in the access log: a client must not be able to blow up log volume. */
const MAX_LOGGED_PATH = 512;

/** Assembles the express app: request context, access log, security headers, routes, 404 and errors. */
export function createApp(deps: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Express walks X-Forwarded-For from the right, skipping trusted hops: req.ip is the first
  // address that did not come from a trusted proxy.
  const trustedProxies = deps.trustedProxies ?? [];
  app.set('trust proxy', trustedProxies.length > 0 ? [...trustedProxies] : false);

  const inContext: RequestHandler = (req, res, next) => {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const startedAt = process.hrtime.bigint();
    // Taken now: mounted routers and proxies may rewrite req.url before the response closes.
    const path = req.path;
    // Taken now too: when a client leaves in the middle of a streamed answer, the request has no socket
    // any more by the time the response closes, and Express's req.ip would throw there (a crash, since
    // it runs in an event handler).
    const remoteAddress = req.ip;
    // Express parses the query string again at every read of req.query: read it only when it can
    // name `watch` (written out, or percent-encoded).
    const watch = mayNameWatch(req.url) ? req.query['watch'] : undefined;
    const request = requestContext(req);
    const context = new LogContext(requestId, request);
    res.on('close', () => {
      const durationMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
      const route = routeTemplate(req, res);
      const completed = res.writableFinished;
      const stands = deps.accessLog
        ? deps.accessLog({ method: req.method, status: res.statusCode, durationMs, completed })
        : 1;
      // An access line per request the policy keeps. Never the query string, headers or body: they may
      // carry secrets.
      if (stands !== undefined) {
        deps.logger.info('request', {
          requestId,
          method: req.method,
          route,
          path: path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path,
          status: res.statusCode,
          durationMs: Math.round(durationMs * 1000) / 1000,
          user: request.identity?.username,
          remoteAddress,
          completed,
          // A sampled line stands for this many routine requests.
          ...(stands > 1 ? { sampled: stands } : {}),
        });
      }
      deps.httpMetrics?.observe({
        method: req.method,
        path,
        watch,
        route,
        statusCode: res.headersSent ? res.statusCode : undefined,
        durationSeconds: durationMs / 1000,
      });
    });
    // One Authorization header at most, checked here rather than in a layer of its own: Express's router
    // costs every layer a request passes.
    const proceed: (err?: unknown) => void = next;
    deps.requestContext.run(context, proceed, duplicateAuthorization(req));
  };
  // One turn of the event loop between reading a request and answering it. A node page cost 11% less CPU
  // with this turn than without it (docs/benchmarks.md, "Routers entered only for their paths"). The
  // likely reason: the server answers the requests read in one turn together, and a busy client is woken
  // once for several answers. Before the routers were guarded, every router a request passed gave a turn.
  const oneTurn: RequestHandler = (_req, _res, next) => {
    setImmediate(next);
  };

  app.use(
    middlewareChain(
      [
        inContext,
        routedByPath(deps.publicRoutes),
        oneTurn,
        // Its own layer: a throw, or a rejection, goes to the error handler.
        ...(deps.authenticate ? [deps.authenticate] : []),
        routedByPath(deps.protectedRoutes),
        ...(deps.methodNotAllowed ? [deps.methodNotAllowed] : []),
        notFoundHandler,
      ],
      errorHandler(deps.logger),
    ),
  );
  return app;
}
