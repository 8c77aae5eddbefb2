import express, { type Express, type RequestHandler, type Router } from 'express';
import type { Logger, RequestContextStore } from '../observability/logger.ts';
import { errorHandler, notFoundHandler } from './error-handler.ts';
import { requestIdFrom } from './request-id.ts';

export interface AppDependencies {
  logger: Logger;
  requestContext: RequestContextStore;
  /** Routers mounted before authentication: probes, token endpoint, discovery documents. */
  publicRoutes: Router[];
  /** Authenticates the caller; everything mounted after it requires a valid identity. */
  authenticate?: RequestHandler;
  /** Routers that need an authenticated caller. */
  protectedRoutes: Router[];
}

/** Route template of a matched request (never the raw path), for logs and metric labels. */
export function routeTemplate(req: express.Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  return route && typeof route.path === 'string' ? `${req.baseUrl}${route.path}` : 'unmatched';
}

/** Assembles the express app: request context, access log, security headers, routes, 404 and errors. */
export function createApp(deps: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use((req, res, next) => {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const startedAt = process.hrtime.bigint();
    const context = { requestId } as { requestId: string; user?: string };
    res.on('close', () => {
      const durationMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
      deps.logger.info('request', {
        requestId,
        method: req.method,
        route: routeTemplate(req),
        path: req.path,
        status: res.statusCode,
        durationMs: Math.round(durationMs * 1000) / 1000,
        user: context.user,
        remoteAddress: req.ip,
        completed: res.writableFinished,
      });
    });
    deps.requestContext.run(context, next);
  });

  for (const router of deps.publicRoutes) app.use(router);
  if (deps.authenticate) app.use(deps.authenticate);
  for (const router of deps.protectedRoutes) app.use(router);

  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
