import type { ErrorRequestHandler, NextFunction, RequestHandler } from 'express';

/** The chain as one middleware, with its layers reachable for tools that list the app's routes. */
export interface MiddlewareChain extends RequestHandler {
  readonly layers: readonly RequestHandler[];
}

/**
 * The app's middleware, all mounted at the root, as one Express layer: each runs in order as in Express
 * (a throw or a rejected promise is an error; `next('route')` passes on), an error goes to `onError`,
 * and what passes the last one, or `onError`, goes back to Express. Express's router would match every
 * layer's path and build its closures again for each (docs/benchmarks.md, "Direct routes").
 */
export function middlewareChain(
  layers: readonly RequestHandler[],
  onError: ErrorRequestHandler,
): MiddlewareChain {
  const chain: RequestHandler = (req, res, done) => {
    let index = 0;
    const next: NextFunction = (err?: unknown) => {
      if (err === 'router') {
        done();
        return;
      }
      if (err && err !== 'route') {
        invokeHandler(() => onError(err, req, res, done), done);
        return;
      }
      const layer = layers[index++];
      if (!layer) {
        done();
        return;
      }
      invokeHandler(() => layer(req, res, next), next);
    };
    next();
  };
  return Object.assign(chain, { layers });
}

/** Runs a handler; a throw or a rejection of the promise it returns goes to `fail`, as in Express. */
export function invokeHandler(run: () => unknown, fail: (err: unknown) => void): void {
  try {
    const returned = run();
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
      (returned as PromiseLike<unknown>).then(undefined, (err: unknown) =>
        fail(err || new Error('Rejected promise')),
      );
    }
  } catch (err) {
    fail(err);
  }
}
