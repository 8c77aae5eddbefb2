import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/kernel/api-error.ts';
import { goDurationText } from '../../src/monitoring/go-duration.ts';
import { expressionOf, metricNames } from '../../src/monitoring/metric-expressions.ts';
import {
  rankAndPage,
  rankAndPageSeries,
  reshape,
  type MetricsAnswer,
} from '../../src/monitoring/metric-results.ts';
import type { PromData, PromSeries } from '../../src/monitoring/prometheus-client.ts';
import {
  indexVector,
  labelKey,
  vectorOf,
  VectorScanner,
  type Vector,
} from '../../src/monitoring/vector-index.ts';
import { confineToNamespace } from '../../src/monitoring/namespace-confinement.ts';
import {
  goDurationSeconds,
  queryTime,
  ranking,
  selectMetrics,
} from '../../src/monitoring/query-parameters.ts';

describe('confineToNamespace', () => {
  const ns = 'team-a';
  test('every selector gets the namespace; the caller’s namespace matchers are dropped', () => {
    assert.equal(confineToNamespace('up', ns), 'up{namespace="team-a"}');
    assert.equal(
      confineToNamespace('sum(rate(http_requests_total{job="api", namespace="other"}[5m])) by (code)', ns),
      'sum ( rate ( http_requests_total {job="api", namespace="team-a"} [ 5m ] ) ) by ( code )',
    );
    assert.equal(
      confineToNamespace('{__name__=~".+", namespace=~".*"}', ns),
      '{__name__=~".+", namespace="team-a"}',
    );
  });
  test('grouping labels, functions, keywords and strings are left alone', () => {
    assert.equal(
      confineToNamespace('sum without (pod) (a) / on (node) group_left (role) b offset 5m', ns),
      'sum without ( pod ) ( a{namespace="team-a"} ) / on ( node ) group_left ( role ) b{namespace="team-a"} offset 5m',
    );
    assert.equal(
      confineToNamespace('label_replace(x, "namespace", "other", "", "") and bool Inf', ns),
      'label_replace ( x{namespace="team-a"} , "namespace" , "other" , "" , "" ) and bool Inf',
    );
    assert.equal(
      confineToNamespace('max_over_time(x[30m:1m]) # a comment', ns),
      'max_over_time ( x{namespace="team-a"} [ 30m : 1m ] )',
    );
  });
  test('what the lexer does not know is refused, not passed on', () => {
    assert.throws(() => confineToNamespace('up ~ down', ns), ApiError);
    assert.throws(() => confineToNamespace('up{job}', ns), ApiError);
    assert.throws(() => confineToNamespace('sum(up{a="b"', ns), ApiError);
  });
  test('the enforced value is quoted', () => {
    assert.equal(confineToNamespace('up', 'a"b'), 'up{namespace="a\\"b"}');
  });
});

describe('the original’s expressions', () => {
  test('a node by name, nodes by filter', () => {
    assert.equal(
      expressionOf('node', 'node_cpu_usage', { resourceFilter: '.*', node: 'n1' }),
      'round(node:node_cpu_utilisation:avg1m{node="n1"} * node:node_num_cpu:sum{node="n1"}, 0.001)',
    );
    assert.equal(
      expressionOf('node', 'node_pod_quota', { resourceFilter: 'a|b$' }),
      'max(kube_node_status_capacity{resource="pods",node=~"a|b$"}) by (node) unless on (node) (kube_node_status_condition{condition="Ready",status=~"unknown|false"} > 0)',
    );
  });
  test("a deployment's pods, a node's pod", () => {
    const deployment = expressionOf('pod', 'pod_memory_usage', {
      resourceFilter: '.*',
      namespace: 'ns',
      workloadKind: 'deployment',
      workload: 'web',
    });
    assert.match(
      deployment,
      /kube_pod_owner\{owner_kind="ReplicaSet", owner_name=~"\^web-\[\^-\]\{1,10\}\$"\}/,
    );
    assert.match(deployment, /kube_pod_info\{pod=~"\.\*", namespace="ns"\}/);
    assert.match(
      expressionOf('pod', 'pod_cpu_usage', { resourceFilter: '.*', node: 'n1', pod: 'ns/p' }),
      /kube_pod_info\{namespace="ns",pod="p", node="n1"\}/,
    );
  });
  test('workloads of a kind, replica metrics by their own label', () => {
    assert.equal(
      expressionOf('workload', 'workload_cpu_usage', {
        resourceFilter: 'web',
        namespace: 'ns',
        workloadKind: 'statefulset',
      }),
      'round(namespace:workload_cpu_usage:sum{namespace="ns", workload=~"StatefulSet:(web)"}, 0.001)',
    );
    assert.match(
      expressionOf('workload', 'workload_deployment_replica', { resourceFilter: '.*', namespace: 'ns' }),
      /kube_deployment_spec_replicas\{namespace="ns", deployment!="", deployment=~"\.\*"\}/,
    );
  });
  test('every metric of every level has an expression without placeholders left', () => {
    let count = 0;
    for (const level of [
      'cluster',
      'node',
      'workspace',
      'namespace',
      'workload',
      'pod',
      'container',
      'pvc',
      'ingress',
      'etcd',
      'apiserver',
      'scheduler',
    ] as const)
      for (const name of metricNames(level)) {
        assert.doesNotMatch(
          expressionOf(level, name, { resourceFilter: '.*', namespace: 'ns', pod: 'p' }),
          /%[SKOJD]%/,
        );
        count++;
      }
    assert.equal(count, 210);
  });
});

describe('request parameters', () => {
  test('Go durations', () => {
    assert.equal(goDurationSeconds('180s'), 180);
    assert.equal(goDurationSeconds('1h30m'), 5400);
    assert.equal(goDurationSeconds('500ms'), 0.5);
    assert.throws(() => goDurationSeconds('1d'), /time: invalid duration "1d"/);
    assert.equal(goDurationText(300), '5m0s');
    assert.equal(goDurationText(3600), '1h0m0s');
    assert.equal(goDurationText(30), '30s');
  });
  test('time, or start and end and step', () => {
    assert.deepEqual(queryTime({}, 100, 10), { kind: 'instant', time: 100 });
    assert.deepEqual(queryTime({ time: '50' }, 100, 10), { kind: 'instant', time: 50 });
    assert.deepEqual(queryTime({ start: '0', end: '1200' }, 100, 10), {
      kind: 'range',
      start: 0,
      end: 1200,
      step: 600,
    });
    assert.throws(() => queryTime({ start: '0' }, 100, 10), /mutually exclusive/);
    assert.throws(() => queryTime({ start: '10', end: '0' }, 100, 10), /'start' must be before 'end'/);
    assert.throws(
      () => queryTime({ start: '0', end: '100', step: '1s' }, 100, 10),
      /101 points .* limit is 10/,
    );
    assert.throws(() => queryTime({ start: '0', end: '100', step: '0s' }, 100, 10), /limit is 10/);
  });
  test('ranking defaults and refusals', () => {
    assert.equal(ranking({}), undefined);
    assert.deepEqual(ranking({ sort_metric: 'm' }), { target: 'm', order: 'desc', page: 1, limit: 5 });
    assert.deepEqual(ranking({ sort_metric: 'm', sort_type: 'asc', page: '2', limit: '3' }), {
      target: 'm',
      order: 'asc',
      page: 2,
      limit: 3,
    });
    assert.throws(() => ranking({ sort_metric: 'm', page: '0' }), /Invalid parameter 'page'/);
    assert.throws(() => ranking({ sort_metric: 'm', limit: 'x' }), /Invalid parameter 'limit'/);
  });
  test('metrics_filter: searched, not anchored; a broken pattern selects nothing', () => {
    const names = ['node_cpu_usage', 'node_cpu_total', 'node_memory_total'];
    assert.deepEqual(selectMetrics(names, 'cpu'), ['node_cpu_usage', 'node_cpu_total']);
    assert.deepEqual(selectMetrics(names, 'node_cpu_usage|node_memory_total$'), [
      'node_cpu_usage',
      'node_memory_total',
    ]);
    assert.deepEqual(selectMetrics(names, undefined), names);
    assert.deepEqual(selectMetrics(names, '('), []);
  });
});

describe('ranking and paging', () => {
  const sample = (node: string, v: string) => ({ metric: { node }, value: [1, v] as [number, string] });
  const answer = (): MetricsAnswer => ({
    results: [
      {
        metric_name: 'usage',
        data: reshape(
          {
            resultType: 'vector',
            result: [sample('b', '2'), sample('a', '2'), sample('c', 'NaN'), sample('d', '5')],
          },
          false,
        ),
      },
      {
        metric_name: 'total',
        data: reshape({ resultType: 'vector', result: [sample('a', '10'), sample('e', '1')] }, false),
      },
      { metric_name: 'broken', data: {}, error: 'x' },
    ],
  });
  const rows = (a: MetricsAnswer, i: number) =>
    (a.results[i]!.data.result ?? []).map((v) => v.metric?.['node'] ?? '-');
  test('desc: values, ties by name, NaN after numbers, resources the target lacks last by name', () => {
    const ranked = rankAndPage(answer(), {
      target: 'usage',
      order: 'desc',
      identifier: 'node',
      page: 1,
      limit: 10,
    });
    assert.deepEqual(rows(ranked, 0), ['d', 'a', 'b', 'c', '-']);
    // Laid out in the same rows: holes where the metric has no value.
    assert.deepEqual(rows(ranked, 1), ['-', 'a', '-', '-', 'e']);
    assert.equal(ranked.results[2]!.error, 'x');
    assert.deepEqual([ranked.page, ranked.total_page, ranked.total_item], [1, 1, 5]);
  });
  test('pages', () => {
    const page = rankAndPage(answer(), {
      target: 'usage',
      order: 'asc',
      identifier: 'node',
      page: 2,
      limit: 2,
    });
    assert.deepEqual(rows(page, 0), ['d', 'c']);
    assert.deepEqual([page.page, page.total_page, page.total_item], [2, 3, 5]);
    const beyond = rankAndPage(answer(), {
      target: 'usage',
      order: 'asc',
      identifier: 'node',
      page: 9,
      limit: 2,
    });
    assert.equal(beyond.results[0]!.data.result, undefined);
  });
  /** The original's ranking written plainly (everything sorted), for the page-only one to meet. */
  const plainRanking = (metrics: PromData[], order: 'asc' | 'desc', page: number, limit: number) => {
    const series = (d: PromData) => d.result as PromSeries[];
    const nameOf = (s: PromSeries) => s.metric['node'] ?? '';
    const byName = (a: PromSeries, b: PromSeries) =>
      nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0;
    const cmp = (a: PromSeries, b: PromSeries) => {
      const [x, y] = [Number(a.value![1]), Number(b.value![1])];
      if (x === y || (Number.isNaN(x) && Number.isNaN(y))) return byName(a, b);
      if (Number.isNaN(x) !== Number.isNaN(y)) return Number.isNaN(x) ? 1 : -1;
      return order === 'asc' ? x - y : y - x;
    };
    const ordered: string[] = [];
    for (const s of [...series(metrics[0]!)].sort(cmp))
      if (nameOf(s) !== '' && !ordered.includes(nameOf(s))) ordered.push(nameOf(s));
    const rest = [...new Set(metrics.flatMap((m) => series(m).map(nameOf)))]
      .filter((name) => name !== '' && !ordered.includes(name))
      .sort();
    const all = [...ordered, ...rest];
    const window = all.slice((page - 1) * limit, page * limit);
    return {
      total: all.length,
      rows: metrics.map((m) =>
        window.map((name) => {
          const last = series(m).findLast((s) => nameOf(s) === name);
          return last ? [name, last.value![1]] : null;
        }),
      ),
    };
  };
  test('ranked from the unreshaped series: the same answer, byte for byte, on every page', () => {
    const many = (n: number, offset: number, escapes: boolean): PromData => ({
      resultType: 'vector',
      result: [
        ...Array.from({ length: n }, (_, i) => ({
          // A label whose value looks like the identifier's (with escapes only where asked), and
          // resources named twice.
          metric: {
            note: i % 5 === 0 ? (escapes ? '},"node":"fake\\' : '},{node:[fake') : 'x',
            node: `n${(i * 7 + offset) % Math.ceil(n / 2)}${escapes && i % 4 === 0 ? '"\\' : ''}`,
          },
          value: [1, String((i * 13) % 5)] as [number, string],
        })),
        { metric: {}, value: [1, '3'] as [number, string] },
        { metric: { node: 'n1' }, value: [1, 'NaN'] as [number, string] },
      ],
    });
    // As Prometheus writes its answer, and as the server locates its series without parsing it (or,
    // with an escape, parses it).
    const indexed = (data: PromData, escapes: boolean, chunkSize: number): Vector => {
      const bytes = Buffer.from(JSON.stringify({ status: 'success', data }));
      const scanner = new VectorScanner();
      for (let at = 0; at < bytes.length; at += chunkSize) scanner.push(bytes.subarray(at, at + chunkSize));
      const found = scanner.end();
      assert.equal(found === undefined, escapes);
      return found ?? vectorOf(data.result as PromSeries[]);
    };
    // 23 and 17 series: every page sorts them all; 230 and 170: a first page keeps only its best.
    for (const [usage, total] of [
      [23, 17],
      [230, 170],
    ] as const)
      for (const escapes of [false, true]) {
        const raw = { usage: many(usage, 0, escapes), total: many(total, 3, escapes) };
        // As the bytes come: in one piece, or in chunks that cut series anywhere.
        const chunkSize = escapes ? 1 << 20 : usage === 23 ? 7 : 4096;
        for (const order of ['asc', 'desc'] as const)
          for (const page of [1, 2, 3, 9, 60]) {
            const options = { target: 'usage', order, identifier: 'node', page, limit: 4 };
            const reshaped = rankAndPage(
              {
                results: [
                  { metric_name: 'usage', data: reshape(raw.usage, false) },
                  { metric_name: 'broken', data: {}, error: 'x' },
                  { metric_name: 'total', data: reshape(raw.total, false) },
                ],
              },
              options,
            );
            const unreshaped = rankAndPageSeries(
              [
                { metric_name: 'usage', series: indexed(raw.usage, escapes, chunkSize) },
                { metric_name: 'broken', error: 'x' },
                { metric_name: 'total', series: indexed(raw.total, escapes, 1) },
              ],
              options,
            );
            assert.equal(JSON.stringify(unreshaped), JSON.stringify(reshaped));
            const plain = plainRanking([raw.usage, raw.total], order, page, 4);
            assert.deepEqual(
              [0, 2].map((i) =>
                (unreshaped.results[i]!.data.result ?? []).map((v) =>
                  v.metric ? [v.metric['node'], v.value![1]] : null,
                ),
              ),
              plain.rows,
            );
            assert.equal(unreshaped.total_item, plain.total);
          }
      }
  });
  test('reshape keeps the original’s member order, labels only when there are some', () => {
    const data: PromData = {
      resultType: 'matrix',
      result: [
        { metric: {}, values: [[1, '2']] },
        { metric: { pod: 'a' }, values: [[1, '3']] },
      ],
    };
    const m =
      ',"min_value":"","max_value":"","avg_value":"","sum_value":"","fee":"","resource_unit":"","currency_unit":""}';
    assert.equal(
      JSON.stringify(reshape(data, true)),
      `{"resultType":"matrix","result":[{"values":[[1,"2"]]${m},{"metric":{"pod":"a"},"values":[[1,"3"]]${m}]}`,
    );
    assert.equal(JSON.stringify(reshape(data, false)), '{"resultType":"vector"}');
  });
  test('the indexed series are the parsed ones; answers not laid out as a vector are left to the parser', () => {
    const bytes = (d: unknown) => Buffer.from(JSON.stringify({ status: 'success', data: d }));
    const series = (v: Vector) => Array.from({ length: v.length }, (_, i) => v.series(i));
    const node = labelKey('node');
    const plain: PromSeries[] = [
      { metric: { __name__: 'up', a: 'node', node: 'ä:[b', x: '},{node:' }, value: [1764220800.5, '+Inf'] },
      { metric: {}, value: [1, 'NaN'] },
      { metric: { xnode: 'y' }, value: [2, '1e+06'] },
    ];
    const whole = bytes({ resultType: 'vector', result: plain });
    const found = indexVector(whole)!;
    assert.deepEqual(series(found), plain);
    // In chunks cut at every two places: the same series.
    for (let a = 1; a < whole.length; a += 3)
      for (let b = a; b < whole.length; b += 5) {
        const scanner = new VectorScanner();
        for (const chunk of [whole.subarray(0, a), whole.subarray(a, b), whole.subarray(b)])
          scanner.push(chunk);
        assert.deepEqual(series(scanner.end()!), plain, `cut at ${a}, ${b}`);
      }
    assert.deepEqual(
      Array.from({ length: found.length }, (_, i) => [found.label(i, node), found.value(i)]),
      [
        ['ä:[b', NaN],
        [undefined, NaN],
        [undefined, 1e6],
      ],
    );
    // An escape anywhere: parsed, then located in its re-written form; a series without a value too.
    const escaped: PromSeries[] = [
      { metric: { node: 'a\\"b', x: '"node":"c"' }, value: [1, '2'] },
      { metric: { node: 'h' } },
    ];
    assert.equal(indexVector(bytes({ resultType: 'vector', result: escaped })), undefined);
    const parsed = vectorOf(escaped);
    assert.deepEqual(series(parsed), escaped);
    assert.deepEqual([parsed.label(0, node), parsed.label(1, node)], ['a\\"b', 'h']);
    assert.deepEqual([parsed.value(0), parsed.value(1)], [2, undefined]);
    assert.deepEqual(series(parsed.filter((labels) => labels['node'] === 'h')), [{ metric: { node: 'h' } }]);
    assert.equal(indexVector(bytes({ resultType: 'vector', result: [] }))?.length, 0);
    assert.equal(indexVector(bytes({ resultType: 'matrix', result: [] })), undefined);
    assert.equal(
      indexVector(bytes({ resultType: 'vector', result: [{ metric: {}, histogram: [1, { count: '1' }] }] })),
      undefined,
    );
    assert.equal(
      indexVector(
        bytes({
          resultType: 'vector',
          result: [
            { metric: { a: 'b' }, histogram: [1, { count: '1' }] },
            { metric: { a: 'c' }, value: [1, '1'] },
          ],
        }),
      ),
      undefined,
    );
    assert.equal(
      indexVector(Buffer.from('{"status":"error","errorType":"bad_data","error":"x"}')),
      undefined,
    );
  });
});
