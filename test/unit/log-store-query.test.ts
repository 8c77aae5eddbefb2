import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { stripAnsi } from '../../src/log-query/log-export.ts';
import { dailyIndex, indicesFor } from '../../src/log-query/index-names.ts';
import { parseLogQuery } from '../../src/log-query/log-query.ts';
import {
  filterQuery,
  timeRange,
  toRecord,
  totalHits,
  workloadPodPattern,
} from '../../src/log-query/store-query.ts';

/** The pattern as a JavaScript regexp: the syntax used ([], {m,n}, |, (), \.) means the same in both. */
const matches = (pattern: string, name: string) => new RegExp(`^(?:${pattern})$`).test(name);

describe('daily indices', () => {
  test('one index per UTC day of the range, both ends included', () => {
    assert.equal(dailyIndex('logs', 0), 'logs-1970.01.01');
    const start = Date.UTC(2025, 11, 30, 23, 59, 59) / 1000;
    const end = Date.UTC(2026, 0, 1, 0, 0, 0) / 1000;
    assert.deepEqual(indicesFor('logs', start, end), [
      'logs-2025.12.30',
      'logs-2025.12.31',
      'logs-2026.01.01',
    ]);
    assert.deepEqual(indicesFor('logs', end, end), ['logs-2026.01.01']);
  });

  test('no start or a long range reads every daily index of the prefix', () => {
    assert.deepEqual(indicesFor('logs', undefined, 1_700_000_000), ['logs-*']);
    assert.deepEqual(indicesFor('logs', 1_600_000_000, 1_700_000_000), ['logs-*']);
  });
});

describe('store query', () => {
  test('time range: start inclusive, end inclusive to the last millisecond of its second', () => {
    assert.deepEqual(timeRange({ startTimeSeconds: 10, endTimeSeconds: 20 }), {
      range: { time: { gte: 10_000, lt: 21_000, format: 'epoch_millis' } },
    });
    assert.deepEqual(timeRange({ startTimeSeconds: undefined, endTimeSeconds: 20 }), {
      range: { time: { lt: 21_000, format: 'epoch_millis' } },
    });
  });

  test('each list becomes one ORed clause; lists are ANDed; absent lists add nothing', () => {
    const q = parseLogQuery({ namespaces: 'a,b', pod_query: 'web', log_query: 'x,y' }, 100);
    const clauses = (filterQuery(q.filter) as { bool: { filter: Record<string, unknown>[] } }).bool.filter;
    assert.deepEqual(clauses[0], { terms: { 'kubernetes.namespace_name.keyword': ['a', 'b'] } });
    assert.deepEqual(clauses[1], {
      bool: { should: [{ match_phrase_prefix: { 'kubernetes.pod_name': 'web' } }], minimum_should_match: 1 },
    });
    assert.deepEqual(clauses[2], {
      bool: {
        should: [{ match_phrase_prefix: { log: 'x' } }, { match_phrase_prefix: { log: 'y' } }],
        minimum_should_match: 1,
      },
    });
    assert.equal(clauses.length, 4, 'plus the time range');
  });

  test('namespace_query is a substring match with wildcard characters escaped', () => {
    const q = parseLogQuery({ namespace_query: 'a*b?' }, 100);
    const clauses = (filterQuery(q.filter) as { bool: { filter: Record<string, unknown>[] } }).bool.filter;
    assert.deepEqual(clauses[0], {
      bool: {
        should: [{ wildcard: { 'kubernetes.namespace_name.keyword': { value: '*a\\*b\\?*' } } }],
        minimum_should_match: 1,
      },
    });
  });
});

describe('workload pod names', () => {
  const web = workloadPodPattern('web');
  for (const pod of ['web-7d4b9c8f6-x2k9p', 'web-5-bcdfg', 'web-0', 'web-12', 'web-x2k9p']) {
    test(`web matches ${pod}`, () => assert.ok(matches(web, pod)));
  }
  for (const pod of [
    'web',
    'web-',
    'webapp-0',
    'web-7d4b9c8f6-x2k9',
    'web-aeiou',
    'web-7d4b9c8f6a1-x2k9p',
    'xweb-0',
    'api-web-0',
  ]) {
    test(`web does not match ${pod}`, () => assert.ok(!matches(web, pod)));
  }

  test('dots in names are literal', () => {
    const dotted = workloadPodPattern('a.b');
    assert.ok(matches(dotted, 'a.b-0'));
    assert.ok(!matches(dotted, 'axb-0'));
  });

  test('long names: Kubernetes truncates the generated base to 58 characters', () => {
    const name = 'd'.repeat(50); // 50 + '-' + hash(10) + '-' > 58
    const pattern = workloadPodPattern(name);
    assert.ok(matches(pattern, `${name}-bcd-x2k9p`), 'short hash: not truncated');
    assert.ok(
      matches(pattern, `${name}-bcdfghj` + 'x2k9p'),
      '7 hash characters fill the 58, then the suffix',
    );
    const daemon = 'e'.repeat(60);
    assert.ok(matches(workloadPodPattern(daemon), `${daemon.slice(0, 58)}x2k9p`));
  });
});

describe('store responses', () => {
  test('total hits as a number or as an object', () => {
    assert.equal(totalHits({ hits: { total: 7 } }), 7);
    assert.equal(totalHits({ hits: { total: { value: 9, relation: 'eq' } } }), 9);
    assert.equal(totalHits({}), 0);
  });

  test('records carry the stored fields, strings only', () => {
    assert.deepEqual(
      toRecord({
        log: 'hello\n',
        time: '2025-01-01T00:00:00.123456789Z',
        kubernetes: { namespace_name: 'ns', pod_name: 'p', container_name: 'c' },
      }),
      { log: 'hello\n', time: '2025-01-01T00:00:00.123456789Z', namespace: 'ns', pod: 'p', container: 'c' },
    );
    assert.deepEqual(toRecord({ log: 5 }), {});
  });

  test('ANSI colour and control sequences are stripped from exports', () => {
    assert.equal(stripAnsi('\x1b[31merror\x1b[0m: \x1b[1;32mok\x1b[m\n'), 'error: ok\n');
    assert.equal(stripAnsi('\x1b]0;title\x07text'), 'text');
    assert.equal(stripAnsi('plain [31m text'), 'plain [31m text');
  });
});
