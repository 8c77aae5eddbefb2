import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import {
  MetricNameError,
  counter,
  createMetricsRegistry,
  gauge,
  histogram,
} from '../../src/observability/metrics.ts';

describe('metric factories', () => {
  test('register on the given registry with the given labels', async () => {
    const registry = new Registry();
    const c = counter(registry, {
      name: 'platform_test_events_total',
      help: 'Events.',
      labelNames: ['kind'],
    });
    c.inc({ kind: 'Node' }, 2);
    const text = await registry.metrics();
    assert.match(text, /^# TYPE platform_test_events_total counter$/m);
    assert.match(text, /^platform_test_events_total\{kind="Node"\} 2$/m);
  });

  test('return the same metric when a second module asks for it with the same shape', () => {
    const registry = new Registry();
    const spec = {
      name: 'platform_test_duration_seconds',
      help: 'Duration.',
      labelNames: ['verb'] as const,
      buckets: [0.1, 1],
    };
    assert.equal(histogram(registry, spec), histogram(registry, spec));
    assert.throws(
      () => histogram(registry, { ...spec, labelNames: ['code'] }),
      /already registered with another type or other labels/,
    );
    assert.throws(
      () => gauge(registry, { name: spec.name, help: 'x', labelNames: ['verb'] }),
      /already registered/,
    );
  });

  test('a collected gauge has one owner and reads its value at scrape time', async () => {
    const registry = new Registry();
    let objects = 3;
    gauge(registry, {
      name: 'platform_test_objects',
      help: 'Objects.',
      collect: (g) => g.set(objects),
    });
    objects = 5;
    assert.match(await registry.metrics(), /^platform_test_objects 5$/m);
    assert.throws(
      () => gauge(registry, { name: 'platform_test_objects', help: 'x', collect: () => {} }),
      /registered twice/,
    );
  });

  test('refuse names and labels that break the conventions', () => {
    const registry = new Registry();
    const cases: [() => unknown, RegExp][] = [
      [() => counter(registry, { name: 'requests_total', help: 'x' }), /start with platform_/],
      [() => counter(registry, { name: 'platform_requests', help: 'x' }), /ends with _total/],
      [() => gauge(registry, { name: 'platform_active_total', help: 'x' }), /must not end with _total/],
      [() => histogram(registry, { name: 'platform_latency', help: 'x', buckets: [1] }), /base unit/],
      [
        () => histogram(registry, { name: 'platform_latency_milliseconds', help: 'x', buckets: [1] }),
        /base unit/,
      ],
      [() => gauge(registry, { name: 'platform_Objects', help: 'x' }), /snake_case/],
      [() => gauge(registry, { name: 'platform_objects', help: ' ' }), /help text/],
      [
        () => counter(registry, { name: 'platform_logins_total', help: 'x', labelNames: ['username'] }),
        /label username would carry unbounded values or secrets/,
      ],
      [
        () => counter(registry, { name: 'platform_requests_total', help: 'x', labelNames: ['path'] }),
        /label path/,
      ],
      [
        () => counter(registry, { name: 'platform_x_total', help: 'x', labelNames: ['Code'] }),
        /not snake_case/,
      ],
    ];
    for (const [register, message] of cases) {
      assert.throws(register, (err: unknown) => err instanceof MetricNameError && message.test(err.message));
    }
    assert.equal(registry.getMetricsAsArray().length, 0);
  });

  test('the process registry has the default metrics minus the three that break naming rules', async () => {
    const registry = createMetricsRegistry();
    const text = await registry.metrics();
    assert.match(text, /^# TYPE process_cpu_seconds_total counter$/m);
    assert.match(text, /^# TYPE nodejs_eventloop_lag_seconds gauge$/m);
    assert.match(text, /^# TYPE nodejs_active_handles gauge$/m);
    assert.doesNotMatch(text, /nodejs_active_(handles|requests|resources)_total/);
  });
});
