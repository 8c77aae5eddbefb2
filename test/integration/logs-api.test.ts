import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ControlPlane } from '../cluster/control-plane.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  deleteLogs,
  openSearchContexts,
  runtimeTime,
  seedLogs,
  uniquePrefix,
  type LogLine,
} from '../support/log-documents.ts';
import { startLogsServer, type LogsServer } from '../support/logs-server.ts';
import { serverKubeConfig } from '../support/nodes-server.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { testLogStore, type TestLogStore } from '../support/shared-log-store.ts';
import { OpenApiConformance } from '../support/openapi-conformance.ts';
import { openApiDocument } from '../../src/http/openapi-document.ts';
import { logsApi } from '../../src/log-query/logs-api.ts';

interface StatusBody {
  kind: string;
  code: number;
  reason: string;
  message: string;
  details?: { group?: string; causes?: { field?: string }[] };
}
interface LogRecord {
  log: string;
  time: string;
  namespace: string;
  pod: string;
  container: string;
}
interface QueryBody {
  query: { total: number; records: LogRecord[] };
}

// At module level: when this file runs alone, the private control plane's and log store's after()
// hooks belong to the whole file.
const cp: ControlPlane = await testControlPlane();
const store: TestLogStore = await testLogStore();

const run = randomBytes(3).toString('hex');
const alpha = `lq-alpha-${run}`;
const beta = `lq-beta-${run}`;
const gamma = `lq-gamma-${run}`;
const readLogsRole = `lq-read-pod-logs-${run}`;

const DAY1 = Date.UTC(2025, 2, 1);
const DAY2 = Date.UTC(2025, 2, 2);
const DAY3 = Date.UTC(2025, 2, 3);
const HOUR = 3_600_000;
/** 2025-03-02T12:00:00Z in seconds: the start of the bounded range tests. */
const T0 = DAY2 / 1000 + 12 * 3600;
const sec = (s: number) => s * 1000;

const webA = 'web-7d4b9c8f6-x2k9p';
const line = (
  namespace: string,
  pod: string,
  container: string,
  timeMs: number,
  log: string,
  nanos = 0,
): LogLine => ({
  namespace,
  pod,
  container,
  timeMs,
  nanos,
  log,
});

/** Fourteen records over three UTC days, placed on the edges of the seconds the range tests name. */
const LINES: LogLine[] = [
  line(alpha, webA, 'nginx', DAY1 + 10 * HOUR, 'GET /healthz 200\n'),
  line(alpha, webA, 'nginx', DAY2 - 1, 'last line of the day\n', 999_999),
  line(alpha, webA, 'nginx', DAY2, 'first line of the day\n'),
  line(alpha, webA, 'nginx', sec(T0 - 1) + 999, 'just before the start\n', 999_999),
  line(alpha, webA, 'nginx', sec(T0), 'ERROR connection refused\n'),
  line(alpha, webA, 'nginx', sec(T0) + 500, '\x1b[31mred alert\x1b[0m\n'),
  line(alpha, webA, 'nginx', sec(T0 + 10) + 999, 'last second of the range\n', 999_999),
  line(alpha, webA, 'nginx', sec(T0 + 11), 'just after the end\n'),
  line(alpha, webA, 'istio-proxy', DAY2 + 13 * HOUR, 'proxy ready\n'),
  line(alpha, 'db-0', 'postgres', DAY3 + 8 * HOUR, 'database system is ready to accept connections\n'),
  line(alpha, 'db-0', 'postgres', DAY3 + 8 * HOUR + 1000, 'ERROR: relation missing\n'),
  line(beta, 'web-5c7b8d9f4-qwrtz', 'nginx', sec(T0 + 5), 'GET /index.html 200\n'),
  line(beta, 'agent-k8f2m', 'agent', DAY2 + 14.5 * HOUR, 'Error shipping metrics\n'),
  line(beta, 'redis-ha-haproxy-ffb8d889d-8x9kj', 'haproxy', DAY2 + 15 * HOUR, 'haproxy started\n'),
];
const ALPHA_COUNT = 11;

/** More lines than one page of the store (1000) for the export tests, one second apart, newest last. */
const EXPORT_LINES = 2500;
const exportStart = Date.UTC(2025, 2, 4, 1);
const bulkLines: LogLine[] = Array.from({ length: EXPORT_LINES }, (_, i) =>
  line(
    gamma,
    'bulk-0',
    'writer',
    exportStart + i * 1000,
    `line ${String(i).padStart(5, '0')} ${'x'.repeat(1000)}\n`,
  ),
);

describe('log query API against a real OpenSearch and the real kube-apiserver', () => {
  const prefix = uniquePrefix('logs-api');
  const exportPrefix = uniquePrefix('logs-export');
  let kc: KubeConfig;
  let server: LogsServer;
  let exportServer: LogsServer;
  let cappedServer: LogsServer;
  let smallPageServer: LogsServer;

  let openapi: OpenApiConformance;
  /** GET that also checks the response against the server's OpenAPI description of the endpoint. */
  const get = async (srv: LogsServer, token: string, query: Record<string, string>) => {
    const res = await fetch(`${srv.logsUrl}?${new URLSearchParams(query)}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    return { status: res.status, headers: res.headers, text: await openapi.assertConforms('GET', res) };
  };
  const asAdmin = async (query: Record<string, string>, srv = server) => {
    const res = await get(srv, cp.admin.token, query);
    assert.equal(res.status, 200, res.text);
    return JSON.parse(res.text) as unknown;
  };
  const total = async (query: Record<string, string>) =>
    ((await asAdmin({ namespaces: `${alpha},${beta}`, ...query })) as QueryBody).query.total;

  before(async () => {
    const ctx = { platformName: 'platform', version: 'test' };
    openapi = await OpenApiConformance.create(openApiDocument(ctx, [logsApi(ctx)]));
    kc = serverKubeConfig(cp.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    for (const name of [alpha, beta]) await core.createNamespace({ body: { metadata: { name } } });
    await rbac.createClusterRole({
      body: {
        metadata: { name: readLogsRole },
        rules: [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }],
      },
    });
    // alice may read logs in alpha only; bob nowhere; admin (system:masters) everywhere.
    await rbac.createNamespacedRoleBinding({
      namespace: alpha,
      body: {
        metadata: { name: readLogsRole },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: readLogsRole },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
      },
    });
    await seedLogs(store.url, prefix, LINES);
    await seedLogs(store.url, exportPrefix, bulkLines);
    server = await startLogsServer({
      kubeconfigPath: cp.kubeconfigPath,
      logging: { hosts: [store.url], indexPrefix: prefix },
    });
    exportServer = await startLogsServer({
      kubeconfigPath: cp.kubeconfigPath,
      logging: { hosts: [store.url], indexPrefix: exportPrefix },
    });
    cappedServer = await startLogsServer({
      kubeconfigPath: cp.kubeconfigPath,
      logging: { hosts: [store.url], indexPrefix: exportPrefix, exportMaxLines: 1500 },
    });
    smallPageServer = await startLogsServer({
      kubeconfigPath: cp.kubeconfigPath,
      logging: { hosts: [store.url], indexPrefix: exportPrefix },
      exportPageSize: 50,
    });
  });

  after(async () => {
    await Promise.all([server, exportServer, cappedServer, smallPageServer].map((s) => s?.stop()));
    await deleteLogs(store.url, prefix);
    await deleteLogs(store.url, exportPrefix);
    const core = kc.makeApiClient(CoreV1Api);
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.deleteClusterRole({ name: readLogsRole }).catch(() => undefined);
    // Namespaces never finish deleting without a controller manager; the names are unique per run.
    for (const name of [alpha, beta]) await core.deleteNamespace({ name }).catch(() => undefined);
  });

  test('query: newest first, ten by default, records as stored', async () => {
    const body = (await asAdmin({ namespaces: alpha })) as QueryBody;
    assert.equal(body.query.total, ALPHA_COUNT);
    assert.equal(body.query.records.length, 10);
    assert.deepEqual(body.query.records[0], {
      log: 'ERROR: relation missing\n',
      time: runtimeTime(DAY3 + 8 * HOUR + 1000),
      namespace: alpha,
      pod: 'db-0',
      container: 'postgres',
    });
    const times = body.query.records.map((r) => Date.parse(r.time));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
    );
    // The nanosecond time string comes back exactly as the runtime wrote it.
    const lastOfDay = body.query.records.find((r) => r.log === 'last line of the day\n');
    assert.equal(lastOfDay?.time, '2025-03-01T23:59:59.999999999Z');
  });

  test('query: sort asc, from and size page through the records', async () => {
    const first = (await asAdmin({ namespaces: alpha, sort: 'asc', size: '3' })) as QueryBody;
    assert.deepEqual(
      first.query.records.map((r) => r.log),
      ['GET /healthz 200\n', 'last line of the day\n', 'first line of the day\n'],
    );
    const next = (await asAdmin({ namespaces: alpha, sort: 'asc', from: '3', size: '2' })) as QueryBody;
    assert.deepEqual(
      next.query.records.map((r) => r.log),
      ['just before the start\n', 'ERROR connection refused\n'],
    );
    assert.equal(next.query.total, ALPHA_COUNT);
    const none = (await asAdmin({ namespaces: alpha, size: '0' })) as QueryBody;
    assert.deepEqual(none.query, { total: ALPHA_COUNT, records: [] });
  });

  test('exact filters: namespaces, pods, containers, workloads', async () => {
    assert.equal(await total({}), LINES.length);
    assert.equal(await total({ namespaces: beta }), 3);
    assert.equal(await total({ pods: 'db-0' }), 2);
    assert.equal(await total({ pods: `db-0,${webA}` }), 11);
    assert.equal(await total({ containers: 'nginx' }), 9);
    assert.equal(await total({ containers: 'ngin' }), 0, 'exact, not a prefix');
    assert.equal(await total({ pods: 'db' }), 0, 'exact, not a prefix');
    // Deployment pods (alpha and beta), not the StatefulSet, DaemonSet or other Deployment.
    assert.equal(await total({ workloads: 'web' }), 10);
    assert.equal(await total({ workloads: 'db' }), 2);
    assert.equal(await total({ workloads: 'agent' }), 1);
    assert.equal(await total({ workloads: 'redis-ha-haproxy' }), 1);
    assert.equal(
      await total({ workloads: 'redis-ha' }),
      0,
      'a workload name is the whole base of the pod name',
    );
    // Parameters are ANDed, values of one parameter ORed.
    assert.equal(await total({ workloads: 'web', containers: 'istio-proxy' }), 1);
    assert.equal(await total({ namespaces: beta, containers: 'nginx,haproxy' }), 2);
  });

  test('fuzzy filters: word prefixes of pod, container and log text; substrings of namespace names', async () => {
    assert.equal(await total({ pod_query: 'haproxy' }), 1, 'a phrase may start at any word of the pod name');
    assert.equal(await total({ pod_query: 'redis-ha' }), 1);
    assert.equal(await total({ pod_query: 'dis' }), 0, 'word prefixes, not substrings');
    assert.equal(await total({ workload_query: 'web' }), 10);
    assert.equal(await total({ container_query: 'ist' }), 1);
    assert.equal(await total({ container_query: 'PROXY' }), 1, 'fuzzy filters ignore case');
    assert.equal(await total({ log_query: 'error' }), 3);
    assert.equal(await total({ log_query: 'error,ready' }), 5);
    assert.equal(await total({ log_query: 'connection ref' }), 1);
    assert.equal(await total({ namespace_query: 'alpha' }), ALPHA_COUNT);
    assert.equal(await total({ namespace_query: `pha-${run}` }), ALPHA_COUNT, 'any substring of the name');
  });

  test('time range: bounds are inclusive and exact at the second', async () => {
    const logs = async (query: Record<string, string>) =>
      ((await asAdmin({ namespaces: alpha, sort: 'asc', ...query })) as QueryBody).query.records.map(
        (r) => r.log,
      );
    assert.deepEqual(await logs({ start_time: String(T0), end_time: String(T0 + 10) }), [
      'ERROR connection refused\n',
      '\x1b[31mred alert\x1b[0m\n',
      'last second of the range\n',
    ]);
    assert.deepEqual(await logs({ start_time: String(T0 - 1), end_time: String(T0 - 1) }), [
      'just before the start\n',
    ]);
    assert.deepEqual(await logs({ start_time: String(T0 + 11), end_time: String(T0 + 11) }), [
      'just after the end\n',
    ]);
    assert.deepEqual(await logs({ start_time: String(T0 + 1), end_time: String(T0 + 9) }), []);
    // Across midnight: two daily indices, one record on each side.
    assert.deepEqual(await logs({ start_time: String(DAY2 / 1000 - 1), end_time: String(DAY2 / 1000) }), [
      'last line of the day\n',
      'first line of the day\n',
    ]);
    // No start: everything up to the end (every daily index); no end: up to now.
    assert.deepEqual(await logs({ end_time: String(DAY2 / 1000 - 1) }), [
      'GET /healthz 200\n',
      'last line of the day\n',
    ]);
    assert.equal((await logs({ start_time: String(DAY3 / 1000), size: '100' })).length, 2);
  });

  test('statistics: distinct containers and log count', async () => {
    assert.deepEqual(await asAdmin({ operation: 'statistics', namespaces: `${alpha},${beta}` }), {
      statistics: { containers: 6, logs: LINES.length },
    });
    assert.deepEqual(await asAdmin({ operation: 'statistics', namespaces: alpha, log_query: 'error' }), {
      statistics: { containers: 2, logs: 2 },
    });
    assert.deepEqual(await asAdmin({ operation: 'statistics', namespaces: alpha, pods: 'none' }), {
      statistics: { containers: 0, logs: 0 },
    });
  });

  test('histogram: buckets of the interval from the first to the last record, bucket time in epoch ms', async () => {
    const body = (await asAdmin({
      operation: 'histogram',
      namespaces: alpha,
      start_time: String(DAY2 / 1000),
      end_time: String(DAY2 / 1000 + 86_399),
      interval: '1h',
    })) as { histogram: { total: number; histograms: { time: number; count: number }[] } };
    assert.equal(body.histogram.total, 7);
    const buckets = body.histogram.histograms;
    assert.equal(buckets.length, 14, 'hourly from 00:00 to 13:00, empty hours included');
    assert.deepEqual(buckets[0], { time: DAY2, count: 1 });
    assert.deepEqual(buckets[11], { time: DAY2 + 11 * HOUR, count: 1 });
    assert.deepEqual(buckets[12], { time: DAY2 + 12 * HOUR, count: 4 });
    assert.deepEqual(buckets[13], { time: DAY2 + 13 * HOUR, count: 1 });
    assert.equal(
      buckets.slice(1, 11).every((b) => b.count === 0),
      true,
    );

    const daily = (await asAdmin({ operation: 'histogram', namespaces: alpha, interval: '1d' })) as {
      histogram: { histograms: { time: number; count: number }[] };
    };
    assert.deepEqual(daily.histogram.histograms, [
      { time: DAY1, count: 2 },
      { time: DAY2, count: 7 },
      { time: DAY3, count: 2 },
    ]);
    const empty = await asAdmin({ operation: 'histogram', namespaces: alpha, pods: 'none' });
    assert.deepEqual(empty, { histogram: { total: 0, histograms: [] } });
  });

  test('histogram: an interval too small for the data is a 400 naming interval', async () => {
    const res = await get(server, cp.admin.token, {
      operation: 'histogram',
      namespaces: alpha,
      interval: '1s',
    });
    assert.equal(res.status, 400, res.text);
    const status = JSON.parse(res.text) as StatusBody;
    assert.equal(status.details?.causes?.[0]?.field, 'interval');
    assert.match(status.message, /^interval/);
  });

  test('export: a text/plain attachment of the raw lines, newest first, colours stripped', async () => {
    const res = await get(server, cp.admin.token, {
      operation: 'export',
      namespaces: alpha,
      start_time: String(T0),
      end_time: String(T0 + 10),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(res.headers.get('content-disposition'), 'attachment');
    assert.equal(res.text, 'last second of the range\nred alert\nERROR connection refused\n');
  });

  test('records sharing a timestamp: paging is a total order (asc, and desc its exact reverse), export too', async () => {
    // Thirty lines written in the same nanosecond (a burst), between two others; one index, in bulk order.
    const tiePrefix = uniquePrefix('logs-ties');
    const tieNs = `lq-ties-${run}`;
    const at = Date.UTC(2025, 2, 5, 9);
    const tied = Array.from({ length: 30 }, (_, i) => `tie ${String(i).padStart(2, '0')}\n`);
    await seedLogs(store.url, tiePrefix, [
      line(tieNs, 'burst-0', 'app', at - 1000, 'before\n'),
      ...tied.map((log) => line(tieNs, 'burst-0', 'app', at, log, 123_456)),
      line(tieNs, 'burst-0', 'app', at + 1000, 'after\n'),
    ]);
    const tieServer = await startLogsServer({
      kubeconfigPath: cp.kubeconfigPath,
      logging: { hosts: [store.url], indexPrefix: tiePrefix },
    });
    try {
      const pages = async (sort: string) => {
        const logs: string[] = [];
        for (let from = 0; from < 32; from += 7) {
          const body = (await asAdmin(
            { namespaces: tieNs, sort, from: String(from), size: '7' },
            tieServer,
          )) as QueryBody;
          assert.equal(body.query.total, 32);
          logs.push(...body.query.records.map((r) => r.log));
        }
        return logs;
      };
      const ascending = ['before\n', ...tied, 'after\n'];
      assert.deepEqual(
        await pages('asc'),
        ascending,
        'every record once, ties in the order they were stored',
      );
      assert.deepEqual(await pages('desc'), [...ascending].reverse(), 'desc is the exact reverse of asc');
      const exported = await get(tieServer, cp.admin.token, { operation: 'export', namespaces: tieNs });
      assert.equal(exported.status, 200);
      assert.equal(exported.text, [...ascending].reverse().join(''));
    } finally {
      await tieServer.stop();
      await deleteLogs(store.url, tiePrefix);
    }
  });

  test('export: more lines than one store page, every line once, cursor released', async () => {
    const res = await get(exportServer, cp.admin.token, { operation: 'export' });
    assert.equal(res.status, 200);
    const lines = res.text.split('\n').slice(0, -1);
    assert.equal(lines.length, EXPORT_LINES);
    assert.equal(new Set(lines).size, EXPORT_LINES);
    assert.match(lines[0]!, new RegExp(`^line ${String(EXPORT_LINES - 1).padStart(5, '0')} `));
    assert.match(lines.at(-1)!, /^line 00000 /);
    await waitFor('scroll cursors released', async () =>
      (await openSearchContexts(store.url, exportPrefix)) === 0 ? true : undefined,
    );
    const metrics = await exportServer.registry.metrics();
    assert.match(metrics, /platform_logging_exports_total\{outcome="completed"\} 1/);
    assert.match(metrics, /platform_logging_store_requests_total\{operation="scroll",outcome="ok"\} 2/);
    assert.match(metrics, /platform_logging_store_requests_total\{operation="clear_scroll",outcome="ok"\} 1/);
  });

  test('export: capped at logging.exportMaxLines', async () => {
    const res = await get(cappedServer, cp.admin.token, { operation: 'export', sort: 'asc' });
    assert.equal(res.status, 200);
    const lines = res.text.split('\n').slice(0, -1);
    assert.equal(lines.length, 1500);
    assert.match(lines[0]!, /^line 00000 /);
    assert.match(lines.at(-1)!, /^line 01499 /);
    await waitFor('scroll cursors released', async () =>
      (await openSearchContexts(store.url, exportPrefix)) === 0 ? true : undefined,
    );
    assert.match(
      await cappedServer.registry.metrics(),
      /platform_logging_exports_total\{outcome="capped"\} 1/,
    );
  });

  test('export: a client that goes away mid-stream releases the cursor on the store', async () => {
    const url = `${smallPageServer.logsUrl}?operation=export`;
    await new Promise<void>((resolve, reject) => {
      const req = http.get(url, { headers: { Authorization: `Bearer ${cp.admin.token}` } }, (res) => {
        assert.equal(res.statusCode, 200);
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    });
    await waitFor('the export to notice the client left', async () =>
      /platform_logging_exports_total\{outcome="aborted"\} 1/.test(await smallPageServer.registry.metrics())
        ? true
        : undefined,
    );
    await waitFor(
      'scroll cursors released',
      async () => ((await openSearchContexts(store.url, exportPrefix)) === 0 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    const lines = Number(
      /platform_logging_export_lines_total (\d+)/.exec(await smallPageServer.registry.metrics())?.[1],
    );
    assert.ok(lines < EXPORT_LINES, `stopped early (${lines} lines written)`);
  });

  describe('time parameters are Unix seconds: anything else is a 400 naming the parameter', () => {
    for (const [query, parameter] of [
      [{ start_time: '1740830400000' }, 'start_time'],
      [{ end_time: '1740830400000' }, 'end_time'],
      [{ start_time: '1740830400.5' }, 'start_time'],
      [{ start_time: '-1740830400' }, 'start_time'],
      [{ end_time: '2025-03-01' }, 'end_time'],
      [{ start_time: 'yesterday' }, 'start_time'],
      [{ start_time: '1740830401', end_time: '1740830400' }, 'end_time'],
    ] as const) {
      test(JSON.stringify(query), async () => {
        const res = await get(server, cp.admin.token, { namespaces: alpha, ...query });
        assert.equal(res.status, 400);
        const status = JSON.parse(res.text) as StatusBody;
        assert.equal(status.kind, 'Status');
        assert.equal(status.reason, 'BadRequest');
        assert.equal(status.code, 400);
        assert.ok(status.message.startsWith(parameter), status.message);
        assert.match(status.message, /seconds/);
        assert.equal(status.details?.causes?.[0]?.field, parameter);
      });
    }
  });

  describe('authorization: get pods/log in every namespace the query touches', () => {
    test('alice reads alpha, where she is bound', async () => {
      const res = await get(server, cp.users.alice.token, { namespaces: alpha });
      assert.equal(res.status, 200, res.text);
      assert.equal((JSON.parse(res.text) as QueryBody).query.total, ALPHA_COUNT);
    });

    test('a namespace the caller may not read is a 403 naming it', async () => {
      const res = await get(server, cp.users.alice.token, { namespaces: `${alpha},${beta}` });
      assert.equal(res.status, 403);
      const status = JSON.parse(res.text) as StatusBody;
      assert.equal(status.reason, 'Forbidden');
      assert.match(status.message, new RegExp(`"${beta}"`));
      assert.doesNotMatch(status.message, new RegExp(`"${alpha}"`));
      const bob = await get(server, cp.users.bob.token, { namespaces: alpha, operation: 'export' });
      assert.equal(bob.status, 403);
      assert.match(bob.text, new RegExp(`User \\\\"bob\\\\".*\\\\"${alpha}\\\\"`));
    });

    test('without a namespace filter the permission is needed cluster-wide', async () => {
      const res = await get(server, cp.users.alice.token, { operation: 'statistics' });
      assert.equal(res.status, 403);
      assert.match((JSON.parse(res.text) as StatusBody).message, /cluster scope.*namespaces/);
      const fuzzy = await get(server, cp.users.alice.token, { namespace_query: 'alpha' });
      assert.equal(fuzzy.status, 403, 'namespace_query alone may touch any namespace');
      assert.equal((await get(server, cp.admin.token, { operation: 'statistics' })).status, 200);
    });

    test('no token is a 401', async () => {
      const { res } = await openapi.fetch(`${server.logsUrl}?namespaces=${alpha}`);
      assert.equal(res.status, 401);
    });
  });

  describe('the removed logging endpoints answer 404 pointing to the query endpoint', () => {
    const group = '/kapis/logging.platform.io/v1alpha2';
    for (const [method, path] of [
      ['GET', `${group}/workspaces/system-workspace`],
      ['GET', `${group}/namespaces/${alpha}`],
      ['GET', `${group}/namespaces/${alpha}/workloads/web`],
      ['GET', `${group}/namespaces/${alpha}/pods/${webA}`],
      ['GET', `${group}/cluster`],
      ['GET', `${group}/fluentbit/outputs`],
      ['POST', `${group}/fluentbit/outputs`],
      ['PUT', `${group}/fluentbit/outputs/es`],
      ['DELETE', `${group}/fluentbit/outputs/es`],
      ['GET', '/kapis/logging.platform.io'],
    ] as const) {
      test(`${method} ${path.replace(run, '…')}`, async () => {
        const { res, body } = await openapi.fetch(`${server.url}${path}`, {
          method,
          headers: { Authorization: `Bearer ${cp.admin.token}`, 'Content-Type': 'application/json' },
          ...(method === 'POST' || method === 'PUT' ? { body: '{"name":"es","type":"elasticsearch"}' } : {}),
        });
        assert.equal(res.status, 404);
        const status = JSON.parse(body) as StatusBody;
        assert.equal(status.kind, 'Status');
        assert.equal(status.reason, 'NotFound');
        assert.match(status.message, /logging\.platform\.io API group was removed/);
        assert.match(status.message, /GET \/kapis\/tenant\.platform\.io\/v1alpha2\/logs/);
        assert.match(status.message, /log-collection operator/);
        assert.equal(status.details?.group, 'logging.platform.io');
      });
    }
  });
});
