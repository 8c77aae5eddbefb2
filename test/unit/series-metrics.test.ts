import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { counter, histogram, MetricNameError } from '../../src/observability/metrics.ts';
import { seriesCounter, seriesHistogram } from '../../src/observability/series-metrics.ts';

const COUNTER = {
  name: 'platform_test_requests_total',
  help: 'Requests.',
  labelNames: ['verb', 'code'] as const,
};
const HISTOGRAM = {
  name: 'platform_test_request_duration_seconds',
  help: 'Duration.',
  labelNames: ['verb', 'code'] as const,
  buckets: [0.001, 0.01, 0.1, 1],
};
// On a bound, between bounds, above every bound, zero: each lands where prom-client puts it.
const OBSERVATIONS: [verb: string, code: string, seconds: number][] = [
  ['LIST', '200', 0.001],
  ['LIST', '200', 0.0011],
  ['LIST', '200', 0],
  ['GET', '404', 0.5],
  ['LIST', '200', 7],
  ['GET', '404', 1],
  ['LIST', 'aborted', 0.01],
];

describe('series metrics', () => {
  test('expose exactly what prom-client exposes for the same observations', async () => {
    const theirs = new Registry();
    const promCounter = counter(theirs, COUNTER);
    const promHistogram = histogram(theirs, HISTOGRAM);
    const ours = new Registry();
    const requests = seriesCounter(ours, COUNTER);
    const duration = seriesHistogram(ours, HISTOGRAM);
    for (const [verb, code, seconds] of OBSERVATIONS) {
      promCounter.inc({ verb, code });
      promHistogram.observe({ verb, code }, seconds);
      requests.series({ verb, code }).inc();
      duration.series({ verb, code }).observe(seconds);
    }
    requests.inc({ verb: 'GET', code: '404' }, 3);
    promCounter.inc({ verb: 'GET', code: '404' }, 3);

    const text = await ours.metrics();
    assert.equal(text, await theirs.metrics());
    assert.match(
      text,
      /^platform_test_request_duration_seconds_bucket\{le="0.001",verb="LIST",code="200"\} 2$/m,
    );
    assert.match(
      text,
      /^platform_test_request_duration_seconds_bucket\{le="\+Inf",verb="LIST",code="200"\} 4$/m,
    );
    assert.match(text, /^platform_test_requests_total\{verb="GET",code="404"\} 5$/m);
  });

  test('a series handle keeps counting into the registry after a reset', async () => {
    const registry = new Registry();
    const requests = seriesCounter(registry, COUNTER);
    const duration = seriesHistogram(registry, HISTOGRAM);
    const listed = requests.series({ verb: 'LIST', code: '200' });
    const timed = duration.series({ verb: 'LIST', code: '200' });
    listed.inc(4);
    timed.observe(0.5);
    registry.resetMetrics();
    assert.match(await registry.metrics(), /^platform_test_requests_total\{verb="LIST",code="200"\} 0$/m);
    listed.inc();
    timed.observe(0.05);
    const text = await registry.metrics();
    assert.match(text, /^platform_test_requests_total\{verb="LIST",code="200"\} 1$/m);
    assert.match(text, /^platform_test_request_duration_seconds_count\{verb="LIST",code="200"\} 1$/m);
    assert.match(text, /^platform_test_request_duration_seconds_sum\{verb="LIST",code="200"\} 0.05$/m);
  });

  test('one label set is one series, however often it is asked for', () => {
    const requests = seriesCounter(new Registry(), COUNTER);
    assert.equal(
      requests.series({ verb: 'GET', code: '200' }),
      requests.series({ verb: 'GET', code: '200' }),
    );
    assert.notEqual(
      requests.series({ verb: 'GET', code: '200' }),
      requests.series({ verb: 'GET', code: '201' }),
    );
  });

  test('a second module gets the same metric; another shape or kind under the name is refused', () => {
    const registry = new Registry();
    assert.equal(seriesCounter(registry, COUNTER), seriesCounter(registry, COUNTER));
    assert.throws(() => seriesCounter(registry, { ...COUNTER, labelNames: ['verb'] }), /other labels/);
    const durations = { ...HISTOGRAM, name: 'platform_test_requests_duration_seconds' };
    histogram(registry, durations);
    assert.throws(() => seriesHistogram(registry, durations), /another type/);
  });

  test('names, labels and values are checked', () => {
    const registry = new Registry();
    assert.throws(
      () => seriesCounter(registry, { name: 'platform_test_requests', help: 'x' }),
      MetricNameError,
    );
    assert.throws(
      () => seriesHistogram(registry, { name: 'platform_test_latency', help: 'x', buckets: [1] }),
      MetricNameError,
    );
    const requests = seriesCounter(registry, COUNTER);
    assert.throws(
      () => requests.series({ verb: 'GET' } as unknown as { verb: string; code: string }),
      /label code has no value/,
    );
    const duration = seriesHistogram(registry, HISTOGRAM);
    assert.throws(() => duration.series({ verb: 'GET', code: '200' }).observe(Number.NaN), TypeError);
  });
});
