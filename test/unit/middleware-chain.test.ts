import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { middlewareChain } from '../../src/http/middleware-chain.ts';

/** Runs the chain on a stand-in request; resolves with what reached the end (Express's `next`). */
function run(layers: RequestHandler[], onError: ErrorRequestHandler): Promise<unknown> {
  return new Promise((resolve) => {
    const done: NextFunction = (err?: unknown) => resolve(err ?? 'done');
    middlewareChain(layers, onError)({} as Request, {} as Response, done);
  });
}

describe('the middleware chain', () => {
  test('layers run in order; what passes the last goes back to Express', async () => {
    const seen: string[] = [];
    const layer =
      (name: string, pass?: string): RequestHandler =>
      (_req, _res, next) => {
        seen.push(name);
        next(pass);
      };
    const onError: ErrorRequestHandler = () => assert.fail('no error');
    assert.equal(await run([layer('a'), layer('b', 'route'), layer('c')], onError), 'done');
    assert.deepEqual(seen, ['a', 'b', 'c']);
  });

  test('a throw, a rejection and next(err) go to the error handler, past the layers after', async () => {
    const after: RequestHandler = () => assert.fail('a layer after the error ran');
    const handled: string[] = [];
    const onError: ErrorRequestHandler = (err: Error, _req, _res, next) => {
      handled.push(err.message);
      next(err);
    };
    const failures: RequestHandler[] = [
      () => {
        throw new Error('thrown');
      },
      async () => {
        await Promise.resolve();
        throw new Error('rejected');
      },
      (_req, _res, next) => next(new Error('passed')),
    ];
    for (const failing of failures) {
      const reached = await run([failing, after], onError);
      assert.ok(reached instanceof Error, 'the error handler passed it on to Express');
    }
    assert.deepEqual(handled, ['thrown', 'rejected', 'passed']);
  });

  test("next('router') leaves the chain", async () => {
    const onError: ErrorRequestHandler = () => assert.fail('no error');
    const after: RequestHandler = () => assert.fail('a layer after it ran');
    assert.equal(await run([(_req, _res, next) => next('router'), after], onError), 'done');
  });

  test('the layers stay reachable for tools that list routes', () => {
    const layers: RequestHandler[] = [(_req, _res, next) => next()];
    assert.deepEqual(middlewareChain(layers, () => {}).layers, layers);
  });
});
