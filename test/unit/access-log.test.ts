import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { Router } from 'express';
import { Registry } from 'prom-client';
import { setIdentity } from '../../src/http/request-context.ts';
import { createApp } from '../../src/http/app.ts';
import { HttpError } from '../../src/http/error-mapper.ts';
import { createHttpMetrics } from '../../src/observability/http-metrics.ts';
import { createLogger, createRequestContextStore } from '../../src/observability/logger.ts';
import { whileServing } from '../support/serving.ts';

/** The express app of the server with a fake authenticator and two routes, logging into memory. */
async function withApp(
  run: (url: string, lines: () => Record<string, unknown>[], registry: Registry) => Promise<void>,
) {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (d: Buffer) => chunks.push(d.toString('utf8')));
  const requestContext = createRequestContextStore();
  const logger = createLogger({ level: 'debug', context: requestContext, stream });
  const registry = new Registry();
  const routes = Router();
  routes.get('/things/:id', (req, res) => {
    logger.info('handling', { id: req.params.id });
    if (req.params.id === 'missing') throw new HttpError(404, 'no such thing');
    res.json({ id: req.params.id });
  });
  const app = createApp({
    logger,
    requestContext,
    httpMetrics: createHttpMetrics(registry),
    publicRoutes: [],
    authenticate: (req, res, next) => {
      if (req.headers.authorization === 'Bearer good')
        setIdentity(res, { username: 'alice', groups: ['developers'] });
      next();
    },
    protectedRoutes: [routes],
  });
  await whileServing(app, (url) =>
    run(
      url,
      () =>
        chunks
          .join('')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l)),
      registry,
    ),
  );
}

describe('access log and request context', () => {
  test('one access line per request with the route template, status, duration and the caller', async () => {
    await withApp(async (url, lines) => {
      const res = await fetch(`${url}/things/t-1?password=hunter2`, {
        headers: { Authorization: 'Bearer good', 'X-Request-Id': 'req-42' },
      });
      assert.equal(res.status, 200);
      await res.text();
      await fetch(`${url}/things/missing`, {
        headers: { Authorization: 'Bearer good', 'X-Request-Id': 'req-43' },
      });
      await fetch(`${url}/elsewhere/x`, { headers: { 'X-Request-Id': 'req-44' } });

      const all = lines();
      const access = (id: string) => all.filter((l) => l['message'] === 'request' && l['requestId'] === id);
      assert.equal(access('req-42').length, 1);
      const line = access('req-42')[0]!;
      assert.equal(line['level'], 'info');
      assert.equal(line['method'], 'GET');
      assert.equal(line['route'], '/things/:id');
      assert.equal(line['path'], '/things/t-1');
      assert.equal(line['status'], 200);
      assert.equal(line['user'], 'alice');
      assert.equal(typeof line['durationMs'], 'number');
      assert.match(String(line['time']), /^\d{4}-\d\d-\d\dT/);
      assert.ok(!JSON.stringify(all).includes('hunter2'), 'query strings are never logged');

      // Lines written while handling carry the request id and the caller, too.
      const handling = all.find((l) => l['message'] === 'handling' && l['requestId'] === 'req-42');
      assert.equal(handling?.['user'], 'alice');

      assert.equal(access('req-43').length, 1);
      assert.equal(access('req-43')[0]!['status'], 404);
      assert.equal(access('req-43')[0]!['route'], '/things/:id', 'errors keep the route template');
      assert.equal(access('req-44')[0]!['route'], 'unmatched');
      assert.equal(access('req-44')[0]!['user'], undefined);
    });
  });

  test('HTTP metrics observe the same requests by route template', async () => {
    await withApp(async (url, _lines, registry) => {
      await (await fetch(`${url}/things/t-1`, { headers: { Authorization: 'Bearer good' } })).text();
      await (await fetch(`${url}/things/t-2`, { headers: { Authorization: 'Bearer good' } })).text();
      const text = await registry.metrics();
      assert.match(
        text,
        /^platform_http_requests_total\{verb="GET",group="",version="",resource="",route="\/things\/:id",code="200"\} 2$/m,
      );
      assert.doesNotMatch(text, /t-1|t-2/);
    });
  });
});
