import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { createHttpMetrics, httpRequestLabels } from '../../src/observability/http-metrics.ts';

describe('HTTP request metrics', () => {
  test('labels come from the route template and closed sets', () => {
    assert.deepEqual(
      httpRequestLabels({
        method: 'GET',
        path: '/kapis/resources.platform.io/v1alpha3/nodes/worker-1',
        watch: undefined,
        route: '/kapis/resources.platform.io/v1alpha3/nodes/:name',
        statusCode: 404,
        durationSeconds: 0.002,
      }),
      {
        verb: 'GET',
        group: 'resources.platform.io',
        version: 'v1alpha3',
        resource: 'nodes',
        route: '/kapis/resources.platform.io/v1alpha3/nodes/:name',
        code: '404',
      },
    );
    assert.deepEqual(
      httpRequestLabels({
        method: 'GET',
        path: '/api/v1/namespaces/x/pods',
        watch: 'true',
        route: '/api/*path',
        statusCode: undefined,
        durationSeconds: 1,
      }),
      { verb: 'WATCH', group: '', version: '', resource: '', route: '/api/*path', code: 'aborted' },
    );
  });

  test('series stay bounded whatever paths, methods and queries clients send', async () => {
    const registry = new Registry();
    const metrics = createHttpMetrics(registry);
    const methods = ['GET', 'POST', 'DELETE', 'BREW', 'PROPFIND'];
    for (let i = 0; i < 2000; i++) {
      const secret = randomBytes(12).toString('hex');
      metrics.observe({
        method: methods[i % methods.length]!,
        path: `/apis/${secret}/v1/${secret}/${i % 2 ? secret : ''}`,
        watch: secret,
        route: 'unmatched',
        statusCode: 404,
        durationSeconds: 0.001,
      });
    }
    const text = await registry.metrics();
    const series = text.split('\n').filter((l) => l.startsWith('platform_http_requests_total{'));
    // GET, LIST, POST, DELETE, DELETECOLLECTION, OTHER at most.
    assert.ok(series.length <= 6, `${series.length} series:\n${series.join('\n')}`);
    assert.doesNotMatch(text, /[0-9a-f]{24}/, 'no client-chosen value reaches a label');
  });

  test('the verb follows each request’s path, also when one route sees several', async () => {
    const registry = new Registry();
    const metrics = createHttpMetrics(registry);
    const paths = [
      '/api/v1/nodes',
      '/api/v1/nodes',
      '/api/v1/nodes/a',
      '/api/v1/nodes',
      '/api/v1/watch/nodes',
    ];
    for (const path of paths) {
      metrics.observe({
        method: 'GET',
        path,
        watch: undefined,
        route: '/api/*path',
        statusCode: 200,
        durationSeconds: 0.001,
      });
    }
    const text = await registry.metrics();
    const count = (verb: string) =>
      new RegExp(
        `^platform_http_requests_total\\{verb="${verb}",[^}]*route="/api/\\*path",code="200"\\} (\\d+)$`,
        'm',
      ).exec(text)?.[1];
    assert.equal(count('LIST'), '3');
    assert.equal(count('GET'), '1');
    assert.equal(count('WATCH'), '1');
  });

  test('one path repeated with other methods, codes and watch values: each request in its own series', async () => {
    const registry = new Registry();
    const metrics = createHttpMetrics(registry);
    const requests: [string, number | undefined, unknown][] = [
      ['GET', 200, undefined],
      ['GET', 200, undefined],
      ['GET', 304, undefined],
      ['GET', 200, undefined],
      ['GET', 200, 'true'],
      ['GET', undefined, 'true'],
      ['DELETE', 200, undefined],
      ['GET', 200, undefined],
    ];
    for (const [method, statusCode, watch] of requests) {
      metrics.observe({
        method,
        path: '/api/v1/nodes',
        watch,
        route: '/api/*path',
        statusCode,
        durationSeconds: 0.001,
      });
    }
    const text = await registry.metrics();
    const count = (verb: string, code: string) =>
      new RegExp(
        `^platform_http_requests_total\\{verb="${verb}",[^}]*route="/api/\\*path",code="${code}"\\} (\\d+)$`,
        'm',
      ).exec(text)?.[1];
    assert.equal(count('LIST', '200'), '4');
    assert.equal(count('LIST', '304'), '1');
    assert.equal(count('WATCH', '200'), '1');
    assert.equal(count('WATCH', 'aborted'), '1');
    assert.equal(count('DELETECOLLECTION', '200'), '1');
  });
});
