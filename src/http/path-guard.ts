import type { IRoute, Request, RequestHandler, Response, Router } from 'express';
import { invokeHandler } from './middleware-chain.ts';

/**
 * Routers mounted at the root are entered by every request: Express tries each of their routes, and a
 * router that answers nothing ends with a `setImmediate`. A node page passed ten routers that way. The
 * dispatch below enters a router only for the paths it can serve; the others are passed in the same turn.
 * docs/benchmarks.md, "Routers entered only for their paths", has the measurements.
 */

const DECLARED = Symbol('pathPrefixes');
type Declared = Router & { [DECLARED]?: readonly string[] };

/**
 * Declares the path prefixes of a router that also has middleware (whose paths cannot be read from its
 * routes). Every path it serves must start with one of them.
 */
export function servedUnder(router: Router, prefixes: readonly string[]): Router {
  (router as Declared)[DECLARED] = prefixes.map((p) => p.toLowerCase());
  return router;
}

/** Routers as one middleware, with the routers reachable for tools that list the app's routes. */
export interface RoutersByPath extends RequestHandler {
  readonly routers: readonly Router[];
}

/**
 * The routers, in order, as one middleware: a request enters only the routers that can serve its path —
 * those with a prefix that starts it (the declared prefixes, or else each route's path up to its first
 * parameter or wildcard; compared without case, as Express's routes match) and those whose paths cannot
 * be known (a router with undeclared middleware). A router that passes the request on hands it to the
 * next one that can serve it; an error goes on to the app's error handlers, as from any middleware.
 * One layer instead of one per router: Express's router costs every layer a request passes, matched or
 * not (docs/benchmarks.md, "One layer for all routers").
 */
export function routedByPath(routers: readonly Router[]): RoutersByPath {
  const entries = routers.map((router) => ({
    router,
    prefixes: (router as Declared)[DECLARED] ?? routePrefixes(router),
  }));
  const directs = directGetRoutes(entries);
  const dispatch: RequestHandler = (req, res, next) => {
    const raw = req.path; // an Express getter: read it once
    const path = UPPER_CASE.test(raw) ? raw.toLowerCase() : raw;
    let index = 0;
    const enterNext = (err?: unknown) => {
      // Express's router ends with a falsy value when it passes the request on ('router' included).
      if (err) {
        next(err);
        return;
      }
      while (index < entries.length) {
        const { router, prefixes } = entries[index++]!;
        if (!prefixes || servesUnder(path, prefixes)) {
          router(req, res, enterNext);
          return;
        }
      }
      next();
    };
    const direct = req.method === 'GET' ? directs.get(path) : undefined;
    if (direct) {
      // What passes the request on goes to the routers after the route's own (none of whose other
      // layers takes this path).
      index = direct.index + 1;
      callRoute(direct, req, res, enterNext);
      return;
    }
    enterNext();
  };
  return Object.assign(dispatch, { routers });
}

/**
 * A GET route with a literal path that is the only layer of its router taking that path, in a router of
 * routes only, with no router before it that could take the path: a GET of exactly that path (any case,
 * as Express matches) calls its handler at once. Express would get there too, through the router's
 * layers and then the route's, at some microseconds a request on the console's most read pages
 * (docs/benchmarks.md, "Direct routes").
 */
interface DirectRoute {
  /** Its router's place among the routers. */
  index: number;
  route: IRoute;
  handle: RequestHandler;
}

/** The router's layer as Express 5's router has it: `match` is not in Express's types. */
type MatchingLayer = Router['stack'][number] & { match?: (path: string) => unknown };

function directGetRoutes(entries: readonly { router: Router; prefixes: readonly string[] | undefined }[]) {
  const directs = new Map<string, DirectRoute>();
  entries.forEach(({ router, prefixes }, index) => {
    // A router with middleware of its own: that middleware must run.
    if (!prefixes) return;
    const layers = router.stack as MatchingLayer[];
    for (const layer of layers) {
      const route = layer.route;
      if (!route || typeof route.path !== 'string' || /[:*{(\\]/.test(route.path)) continue;
      const path = route.path.toLowerCase();
      if (directs.has(path)) continue;
      // (A stand-in route without a stack, as tests make, is never direct.)
      const forGet = (route.stack ?? []).filter((l) => !l.method || l.method === 'get');
      if (forGet.length !== 1 || forGet[0]!.method !== 'get') continue;
      const alone = layers.every(
        (other) => other === layer || (typeof other.match === 'function' && !other.match(route.path)),
      );
      const first = entries.slice(0, index).every((e) => e.prefixes && !servesUnder(path, e.prefixes));
      if (alone && first) directs.set(path, { index, route, handle: forGet[0]!.handle });
    }
  });
  return directs;
}

/** Calls a route's handler as Express does: `req.route` and `req.params` set, a throw or rejection to `next`. */
function callRoute(direct: DirectRoute, req: Request, res: Response, next: (err?: unknown) => void): void {
  req.route = direct.route;
  req.params = {};
  // Leaving the route ('route') or its router ('router') passes the request on, as Express's router does.
  const proceed = (err?: unknown) => next(err === 'route' || err === 'router' ? undefined : err);
  invokeHandler(() => direct.handle(req, res, proceed), proceed);
}

function servesUnder(path: string, prefixes: readonly string[]): boolean {
  for (const prefix of prefixes) if (path.startsWith(prefix)) return true;
  return false;
}

const UPPER_CASE = /[A-Z]/;

/** Each route's literal prefix, or undefined when the router has a layer that is not a route. */
function routePrefixes(router: Router): string[] | undefined {
  const prefixes = new Set<string>();
  for (const layer of router.stack) {
    const path: unknown = layer.route?.path;
    if (typeof path !== 'string') return undefined;
    const variable = path.search(/[:*{(\\]/);
    prefixes.add((variable < 0 ? path : path.slice(0, variable)).toLowerCase());
  }
  return [...prefixes];
}
