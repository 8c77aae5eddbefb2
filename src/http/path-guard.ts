import type { RequestHandler, Router } from 'express';

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
    enterNext();
  };
  return Object.assign(dispatch, { routers });
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
