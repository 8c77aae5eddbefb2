import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Request, Response } from 'express';
import { methodNotAllowed } from '../../src/http/method-not-allowed.ts';
import type { Operation } from '../../src/http/openapi-components.ts';
import { ApiError } from '../../src/kernel/api-error.ts';

const op = { responses: {} } as unknown as Operation;

function run(path: string, method: string): unknown {
  const handler = methodNotAllowed({
    '/healthz': { get: op },
    '/oauth/token': { post: op },
    '/kapis/resources.acme.io/v1alpha3/nodes/{name}': { get: op },
  });
  let passed: unknown = 'not called';
  handler({ path, method } as Request, {} as Response, (err?: unknown) => (passed = err));
  return passed;
}

describe('405 for known paths', () => {
  test('a known path with another method: 405 naming the allowed methods (GET implies HEAD)', () => {
    const err = run('/healthz', 'DELETE');
    assert.ok(err instanceof ApiError);
    assert.equal(err.statusCode, 405);
    assert.equal(err.allow, 'GET, HEAD');
    assert.match(err.message, /method DELETE is not allowed on \/healthz; use GET, HEAD/);
    assert.equal((run('/oauth/token', 'GET') as ApiError).allow, 'POST');
  });

  test('path parameters match one segment; unknown paths go on to the 404', () => {
    assert.equal((run('/kapis/resources.acme.io/v1alpha3/nodes/n1', 'PUT') as ApiError).statusCode, 405);
    assert.equal(run('/kapis/resources.acme.io/v1alpha3/nodes/n1/x', 'PUT'), undefined);
    assert.equal(run('/kapis/resources.acme.io/v1alpha3/nodes/', 'PUT'), undefined);
    assert.equal(run('/kapis/resourcesXacme.io/v1alpha3/nodes/n1', 'PUT'), undefined, 'dots are literal');
    assert.equal(run('/nowhere', 'GET'), undefined);
  });
});
