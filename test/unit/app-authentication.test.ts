import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { Router, type RequestHandler } from 'express';
import { createApp } from '../../src/http/app.ts';
import { HttpError } from '../../src/http/error-mapper.ts';
import { setIdentity } from '../../src/http/request-context.ts';
import { createLogger, createRequestContextStore } from '../../src/observability/logger.ts';
import { whileServing } from '../support/serving.ts';

/** The app with `authenticate` in front of one protected route; answers of three requests. */
async function answers(authenticate: RequestHandler): Promise<{ status: number; body: string }[]> {
  const requestContext = createRequestContextStore();
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const logger = createLogger({ level: 'error', context: requestContext, stream: sink });
  const routes = Router();
  routes.get('/things', (_req, res) => {
    res.json({ ok: true });
  });
  const app = createApp({
    logger,
    requestContext,
    publicRoutes: [],
    authenticate,
    protectedRoutes: [routes],
  });
  const out: { status: number; body: string }[] = [];
  await whileServing(app, async (url) => {
    for (const token of ['good', 'bad', 'good']) {
      const res = await fetch(`${url}/things`, {
        headers: { Authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(5000),
      });
      out.push({ status: res.status, body: await res.text() });
    }
  });
  return out;
}

const refusal = new HttpError(401, 'Unauthorized: not this one');

describe('the authentication layer of the app', () => {
  const cases: [string, RequestHandler][] = [
    [
      'a synchronous handler that throws',
      (req, res, next) => {
        if (req.headers.authorization !== 'Bearer good') throw refusal;
        setIdentity(res, { username: 'alice', groups: [] });
        next();
      },
    ],
    [
      'an async handler that rejects',
      async (req, res, next) => {
        await Promise.resolve();
        if (req.headers.authorization !== 'Bearer good') throw refusal;
        setIdentity(res, { username: 'alice', groups: [] });
        next();
      },
    ],
    [
      'a handler that passes the error to next',
      (req, res, next) => {
        if (req.headers.authorization !== 'Bearer good') {
          next(refusal);
          return;
        }
        setIdentity(res, { username: 'alice', groups: [] });
        next();
      },
    ],
  ];
  for (const [name, authenticate] of cases) {
    test(`${name}: the refusal is answered, and the next request is served`, async () => {
      const [first, refused, again] = await answers(authenticate);
      assert.equal(first?.status, 200);
      assert.equal(refused?.status, 401);
      assert.match(refused?.body ?? '', /not this one/);
      assert.equal(again?.status, 200);
    });
  }
});
