import type { Request, Response } from 'express';

/** Label value of every request that no route took: one value, whatever path the client sent. */
export const UNMATCHED_ROUTE = 'unmatched';

const TEMPLATE_KEY = 'routeTemplate';

/**
 * For handlers that are not express routes (a proxy mounted with `app.use`): names the template that
 * logs and metrics show for this request, e.g. `/api/*`. Never pass a raw path.
 */
export function setRouteTemplate(res: Response, template: string): void {
  res.locals[TEMPLATE_KEY] = template;
}

/**
 * Route template of a request (never the raw path), for logs and metric labels: the matched express
 * route, else what the handler declared with setRouteTemplate(), else `unmatched`. Routers are mounted
 * at the root (createApp), so a route's path is the whole template.
 */
export function routeTemplate(req: Request, res: Response): string {
  const route = (req as { route?: { path?: unknown } }).route;
  if (route && typeof route.path === 'string') return `${req.baseUrl}${route.path}`;
  const declared: unknown = res.locals[TEMPLATE_KEY];
  return typeof declared === 'string' ? declared : UNMATCHED_ROUTE;
}
