import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError as HttpError } from '../../src/kernel/api-error.ts';
import { bucketCount, parseInterval } from '../../src/log-query/histogram-interval.ts';
import { MAX_RESULT_WINDOW, parseLogQuery } from '../../src/log-query/log-query.ts';
import { MAX_UNIX_SECONDS, parseUnixSeconds } from '../../src/log-query/unix-seconds.ts';

const NOW = 1_763_000_000;
const parse = (query: Record<string, unknown>) => parseLogQuery(query, NOW);

function rejects(query: Record<string, unknown>, parameter: string, message: RegExp) {
  assert.throws(
    () => parse(query),
    (err: unknown) => {
      assert.ok(err instanceof HttpError, String(err));
      assert.equal(err.statusCode, 400);
      assert.ok(err.message.startsWith(parameter), `message names ${parameter}: ${err.message}`);
      assert.match(err.message, message);
      assert.equal(err.details?.causes?.[0]?.field, parameter);
      return true;
    },
  );
}

describe('Unix seconds', () => {
  test('whole non-negative integers are seconds; absent or empty is no value', () => {
    assert.equal(parseUnixSeconds('start_time', '1700000000'), 1_700_000_000);
    assert.equal(parseUnixSeconds('start_time', '0'), 0);
    assert.equal(parseUnixSeconds('start_time', String(MAX_UNIX_SECONDS)), MAX_UNIX_SECONDS);
    assert.equal(parseUnixSeconds('start_time', undefined), undefined);
    assert.equal(parseUnixSeconds('start_time', ''), undefined);
  });

  for (const [raw, why] of [
    ['1700000000000', /milliseconds/],
    [String(MAX_UNIX_SECONDS + 1), /milliseconds/],
    ['99999999999999999999999', /too large/],
    ['1700000000.5', /fractions/],
    ['1700000000,5', /fractions/],
    ['-1', /not negative/],
    ['- 1', /not negative/],
    ['+1700000000', /whole seconds/],
    ['1.7e9', /whole seconds/],
    ['0x10', /whole seconds/],
    ['017', /whole seconds/],
    [' 1700000000', /whole seconds/],
    ['2023-01-01', /whole seconds/],
    ['now', /whole seconds/],
  ] as const) {
    test(`${JSON.stringify(raw)} is refused, naming the parameter and seconds`, () => {
      rejects({ start_time: raw }, 'start_time', why);
      rejects({ end_time: raw }, 'end_time', /seconds/);
    });
  }

  test('end_time before start_time is refused; equal bounds are one second', () => {
    rejects({ start_time: '1700000001', end_time: '1700000000' }, 'end_time', /before start_time.*seconds/);
    const q = parse({ start_time: '1700000000', end_time: '1700000000' });
    assert.equal(q.filter.startTimeSeconds, 1_700_000_000);
    assert.equal(q.filter.endTimeSeconds, 1_700_000_000);
  });

  test('missing end_time is now; missing start_time is no lower bound; a future start without end is refused', () => {
    const q = parse({});
    assert.equal(q.filter.endTimeSeconds, NOW);
    assert.equal(q.filter.startTimeSeconds, undefined);
    rejects({ start_time: String(NOW + 10) }, 'start_time', /in the future.*seconds/);
  });

  test('a parameter given twice is refused', () => {
    rejects({ start_time: ['1', '2'] }, 'start_time', /at most once/);
  });
});

describe('log query parameters', () => {
  test('defaults', () => {
    const q = parse({});
    assert.equal(q.operation, 'query');
    assert.equal(q.sort, 'desc');
    assert.equal(q.from, 0);
    assert.equal(q.size, 10);
    assert.deepEqual(q.interval, { kind: 'fixed', value: '15m', seconds: 900 });
    assert.deepEqual(q.filter.namespaces, []);
  });

  test('every parameter', () => {
    const q = parse({
      operation: 'histogram',
      namespaces: 'a, b,,a',
      namespace_query: 'kube',
      workloads: 'web',
      workload_query: 'we',
      pods: 'web-0',
      pod_query: 'web',
      containers: 'nginx',
      container_query: 'ng',
      log_query: 'error,warn',
      start_time: '1700000000',
      end_time: '1700003600',
      interval: '1h',
      sort: 'asc',
      from: '20',
      size: '50',
      unknown: 'ignored',
    });
    assert.equal(q.operation, 'histogram');
    assert.deepEqual(q.filter.namespaces, ['a', 'b']);
    assert.deepEqual(q.filter.namespaceQuery, ['kube']);
    assert.deepEqual(q.filter.workloads, ['web']);
    assert.deepEqual(q.filter.workloadQuery, ['we']);
    assert.deepEqual(q.filter.pods, ['web-0']);
    assert.deepEqual(q.filter.podQuery, ['web']);
    assert.deepEqual(q.filter.containers, ['nginx']);
    assert.deepEqual(q.filter.containerQuery, ['ng']);
    assert.deepEqual(q.filter.logQuery, ['error', 'warn']);
    assert.equal(q.filter.startTimeSeconds, 1_700_000_000);
    assert.equal(q.filter.endTimeSeconds, 1_700_003_600);
    assert.equal(q.sort, 'asc');
    assert.equal(q.from, 20);
    assert.equal(q.size, 50);
    assert.equal(q.interval.value, '1h');
  });

  test('bad values name their parameter', () => {
    rejects({ operation: 'delete' }, 'operation', /query, statistics, histogram, export/);
    rejects({ sort: 'up' }, 'sort', /asc or desc/);
    rejects({ size: '-1' }, 'size', /whole number from 0 to 1000/);
    rejects({ size: '1001' }, 'size', /0 to 1000/);
    rejects({ size: 'ten' }, 'size', /whole number/);
    rejects({ from: '1.5' }, 'from', /whole number/);
    rejects({ from: '9995', size: '10' }, 'from', new RegExp(`${MAX_RESULT_WINDOW}.*export`));
    rejects({ namespaces: 'Not_A_Namespace' }, 'namespaces', /not a namespace name/);
    rejects({ pods: 'a b' }, 'pods', /not a pod name/);
    rejects({ containers: 'x'.repeat(64) }, 'containers', /longer than 63/);
    rejects(
      { namespaces: Array.from({ length: 101 }, (_, i) => `n${i}`).join(',') },
      'namespaces',
      /at most 100/,
    );
    rejects({ interval: '15' }, 'interval', /s, m, h or d/);
    rejects({ interval: '0m' }, 'interval', /positive/);
    rejects({ interval: '2M' }, 'interval', /take 1 only/);
  });

  test('a histogram whose range would have too many buckets is refused', () => {
    rejects(
      { operation: 'histogram', start_time: '1600000000', end_time: '1700000000', interval: '1s' },
      'interval',
      /buckets/,
    );
    // The same interval on a short range is fine, and other operations do not count buckets.
    parse({ operation: 'histogram', start_time: '1700000000', end_time: '1700000100', interval: '1s' });
    parse({ operation: 'query', start_time: '1600000000', end_time: '1700000000', interval: '1s' });
  });
});

describe('histogram intervals', () => {
  test('fixed and calendar units', () => {
    assert.deepEqual(parseInterval('30s'), { kind: 'fixed', value: '30s', seconds: 30 });
    assert.deepEqual(parseInterval('2d'), { kind: 'fixed', value: '2d', seconds: 172_800 });
    assert.equal((parseInterval('1M') as { kind: string }).kind, 'calendar');
    assert.equal((parseInterval('1y') as { kind: string }).kind, 'calendar');
    assert.equal(typeof parseInterval('1ms'), 'string');
    assert.equal(typeof parseInterval('15 m'), 'string');
  });

  test('bucket count covers both ends', () => {
    const minute = parseInterval('1m');
    assert.ok(typeof minute !== 'string');
    assert.equal(bucketCount(minute, 0, 59), 1);
    assert.equal(bucketCount(minute, 0, 60), 2);
  });
});
