import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import express, { type Express } from 'express';
import { startServer, type RunningServer } from '../../src/http/server.ts';
import { Readiness } from '../../src/kernel/readiness.ts';
import { createLogger, createRequestContextStore } from '../../src/observability/logger.ts';

describe('requests and responses are born with the Express app’s prototypes', () => {
  let app: Express;
  let running: RunningServer;
  // What node:http created, before Express saw it.
  const born: { req: object | null; res: object | null }[] = [];

  before(async () => {
    app = express();
    app.get('/echo', (req, res) => {
      res.json({ query: req.query, ip: req.ip });
    });
    const logger = createLogger({ level: 'error', context: createRequestContextStore() });
    running = await startServer(app, {
      host: '127.0.0.1',
      port: 0,
      requestTimeoutSeconds: 10,
      readiness: new Readiness(),
      logger,
    });
    running.server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      born.push({ req: Object.getPrototypeOf(req) as object, res: Object.getPrototypeOf(res) as object });
    });
  });
  after(() => running.shutdown(1000));

  test('Express finds its prototypes already in place, so it never changes an object’s prototype', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${running.url}/echo?a=${i}`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { query: Record<string, string>; ip: string };
      assert.deepEqual(body.query, { a: String(i) }, 'Express’s request getters work');
      assert.equal(body.ip, '127.0.0.1');
    }
    assert.equal(born.length, 3);
    for (const { req, res } of born) {
      assert.equal(req, app.request);
      assert.equal(res, app.response);
    }
  });

  test('they are still node:http’s messages', async () => {
    let seen: { request: boolean; response: boolean } | undefined;
    running.server.prependOnceListener('request', (req: IncomingMessage, res: ServerResponse) => {
      seen = { request: req instanceof IncomingMessage, response: res instanceof ServerResponse };
    });
    const res = await fetch(`${running.url}/echo`, { method: 'POST', body: 'x' });
    assert.equal(res.status, 404, 'Express answers an unknown route');
    assert.deepEqual(seen, { request: true, response: true });
  });
});
