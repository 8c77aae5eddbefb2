import type { RequestHandler, Router } from 'express';

/**
 * Routers mounted at the root are entered by every request: Express tries each of their routes, and a
 * router that answers nothing ends with a `setImmediate`. A node page passed ten routers that way. The
 * guard below enters a router only for the paths it can serve; the others pass it in the same turn.
 * docs/benchmarks.md, "Routers entered only for their paths", has the measurements.
 */

/** A guarded router, with the router itself reachable for tools that list the app's routes. */
export interface GuardedRouter extends RequestHandler {
  readonly router: Router;
}

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

/**
 * The router, entered only by requests whose path starts with one of its prefixes: the declared ones, or
 * else each route's path up to its first parameter or wildcard. Compared without case, as Express
 * routes match. A router with undeclared middleware is returned as it is: it is entered by every request.
 */
export function enteredForItsPaths(router: Router): RequestHandler {
  const prefixes = (router as Declared)[DECLARED] ?? routePrefixes(router);
  if (!prefixes) return router;
  const guarded: RequestHandler = (req, res, next) => {
    const raw = req.path; // an Express getter: read it once
    const path = UPPER_CASE.test(raw) ? raw.toLowerCase() : raw;
    for (const prefix of prefixes) {
      if (path.startsWith(prefix)) {
        router(req, res, next);
        return;
      }
    }
    next();
  };
  return Object.assign(guarded, { router }) satisfies GuardedRouter;
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
