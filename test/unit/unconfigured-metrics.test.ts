import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/kernel/api-error.ts';
import {
  NOT_CONFIGURED,
  requestedMetrics,
  singleParameter,
  unconfiguredAnswer,
} from '../../src/monitoring/unconfigured-metrics.ts';

test('metrics_filter as the console sends it (a|b|c$) names each metric once, in order', () => {
  assert.deepEqual(requestedMetrics('node_cpu_usage|node_cpu_total|node_cpu_usage|node_pod_quota$'), [
    'node_cpu_usage',
    'node_cpu_total',
    'node_pod_quota',
  ]);
  assert.deepEqual(requestedMetrics('^cluster_cpu_usage$'), ['cluster_cpu_usage']);
});

test('patterns, metering metrics and an absent filter name no metric', () => {
  assert.deepEqual(requestedMetrics(undefined), []);
  assert.deepEqual(requestedMetrics('.*'), []);
  assert.deepEqual(requestedMetrics('node_.*|meter_pod_cpu_usage|pod_memory_usage$'), ['pod_memory_usage']);
});

test("the answer: the original's Metric shape with empty data and the not-configured error", () => {
  assert.deepEqual(unconfiguredAnswer(['a_b']), {
    results: [{ metric_name: 'a_b', data: {}, error: NOT_CONFIGURED }],
  });
});

test('a parameter given twice is a 400 naming it', () => {
  assert.equal(singleParameter({ x: 'y' }, 'x'), 'y');
  assert.throws(
    () => singleParameter({ metrics_filter: ['a', 'b'] }, 'metrics_filter'),
    (err) => err instanceof ApiError && err.statusCode === 400 && err.message.includes('metrics_filter'),
  );
});
