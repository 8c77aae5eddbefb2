import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ControlPlane } from '../cluster/control-plane.ts';
import { freePort } from '../cluster/free-port.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { startTlsProxy, type TlsProxy } from '../logstore/tls-proxy.ts';
import { deleteLogs, seedLogs, uniquePrefix, type LogLine } from '../support/log-documents.ts';
import { startLogsServer, type LogsServer, type LogsServerOptions } from '../support/logs-server.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { testLogStore, type TestLogStore } from '../support/shared-log-store.ts';
import { startTcpGate } from '../support/tcp-gate.ts';

interface StatusBody {
  kind: string;
  code: number;
  reason: string;
  message: string;
}

// At module level: when this file runs alone, the private control plane's and log store's after()
// hooks belong to the whole file.
const cp: ControlPlane = await testControlPlane();
const store: TestLogStore = await testLogStore();

const NAMESPACE = 'proxied';
const LINES: LogLine[] = Array.from({ length: 30 }, (_, i) => ({
  namespace: NAMESPACE,
  pod: `api-${i % 3}`,
  container: 'api',
  timeMs: Date.UTC(2025, 5, 1, 12, 0, i),
  log: `request ${i}\n`,
}));

describe('the log store behind a TLS reverse proxy with basic auth (real nginx), and when it is gone', () => {
  const prefix = uniquePrefix('logs-proxy');
  let proxy: TlsProxy;
  const servers: LogsServer[] = [];
  const blackholes: net.Server[] = [];

  const serve = async (logging: LogsServerOptions['logging']) => {
    const server = await startLogsServer({
      kubeconfigPath: cp.kubeconfigPath,
      logging: { indexPrefix: prefix, ...logging },
    });
    servers.push(server);
    return server;
  };
  /** GET as admin, with a deadline: a hanging store must become a 503, never a hanging request. */
  const get = async (server: LogsServer, query = `namespaces=${NAMESPACE}`) => {
    const res = await fetch(`${server.logsUrl}?${query}`, {
      headers: { Authorization: `Bearer ${cp.admin.token}` },
      signal: AbortSignal.timeout(20_000),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  before(async () => {
    await seedLogs(store.url, prefix, LINES);
    proxy = await startTlsProxy(store.url);
  });

  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    for (const b of blackholes) b.close();
    await proxy?.stop();
    await deleteLogs(store.url, prefix);
  });

  test('https with the proxy CA and basic auth: every operation works through the proxy', async () => {
    const server = await serve({
      hosts: [proxy.url],
      username: proxy.username,
      password: proxy.password,
      tls: { caFile: proxy.caFile },
    });
    const query = await get(server, `namespaces=${NAMESPACE}&size=5&sort=asc`);
    assert.equal(query.status, 200, query.text);
    const body = JSON.parse(query.text) as { query: { total: number; records: { log: string }[] } };
    assert.equal(body.query.total, LINES.length);
    assert.equal(body.query.records[0]?.log, 'request 0\n');
    const stats = await get(server, `namespaces=${NAMESPACE}&operation=statistics`);
    assert.deepEqual(JSON.parse(stats.text), { statistics: { containers: 3, logs: LINES.length } });
    const exported = await get(server, `namespaces=${NAMESPACE}&operation=export`);
    assert.equal(exported.status, 200);
    assert.equal(exported.text.split('\n').length - 1, LINES.length);
    // The password is in no log line and no response.
    const everything = [...server.logLines(), query.text, stats.text].join('\n');
    assert.ok(!everything.includes(proxy.password), 'the store password leaked');
  });

  test('certificate verification is on by default: without the CA the store is unavailable (503)', async () => {
    const server = await serve({ hosts: [proxy.url], username: proxy.username, password: proxy.password });
    const res = await get(server);
    assert.equal(res.status, 503);
    assert.equal((JSON.parse(res.text) as StatusBody).message, 'the log store is unavailable');
    assert.ok(
      server.logLines().some((l) => l.includes('log store call failed') && /certificate/i.test(l)),
      'the server log says why: the certificate',
    );
  });

  test('logging.tls.insecureSkipVerify accepts the unknown certificate', async () => {
    const server = await serve({
      hosts: [proxy.url],
      username: proxy.username,
      password: proxy.password,
      tls: { insecureSkipVerify: true },
    });
    assert.equal((await get(server)).status, 200);
  });

  test('wrong credentials: 502 naming the credential settings, the password never shown', async () => {
    const wrong = 'not-the-password-123';
    const server = await serve({
      hosts: [proxy.url],
      username: proxy.username,
      password: wrong,
      tls: { caFile: proxy.caFile },
    });
    const res = await get(server);
    assert.equal(res.status, 502);
    const status = JSON.parse(res.text) as StatusBody;
    assert.equal(status.reason, 'BadGateway');
    assert.match(status.message, /credentials.*logging\.username/);
    assert.ok(![...server.logLines(), res.text].join('\n').includes(wrong));
  });

  test('a proxy whose store is down (nginx answers 502) is a 503', async () => {
    const deadStore = await startTlsProxy(`http://127.0.0.1:${await freePort()}`);
    try {
      const server = await serve({
        hosts: [deadStore.url],
        username: deadStore.username,
        password: deadStore.password,
        tls: { caFile: deadStore.caFile },
      });
      const res = await get(server);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '5');
    } finally {
      await deadStore.stop();
    }
  });

  test('a stopped store (connection refused) is a 503; the API recovers as soon as the store is back', async () => {
    const gate = await startTcpGate('127.0.0.1', Number(new URL(store.url).port));
    try {
      const server = await serve({ hosts: [`http://${gate.address}`] });
      assert.equal((await get(server)).status, 200);
      gate.close();
      const res = await get(server);
      assert.equal(res.status, 503);
      assert.match(
        await server.registry.metrics(),
        /platform_logging_store_requests_total\{operation="search",outcome="unavailable"\} 1/,
      );
      // The rest of the API keeps working.
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
      gate.open();
      await waitFor(
        'the log API to answer again',
        async () => ((await get(server)).status === 200 ? true : undefined),
        {
          timeoutMs: 15_000,
          intervalMs: 200,
        },
      );
    } finally {
      await gate.stop();
    }
  });

  test('a store that accepts connections but never answers is a 503 after logging.requestTimeoutSeconds', async () => {
    const sockets = new Set<net.Socket>();
    const blackhole = net.createServer((s) => sockets.add(s));
    blackholes.push(blackhole);
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const { port } = blackhole.address() as net.AddressInfo;
    const server = await serve({ hosts: [`http://127.0.0.1:${port}`], requestTimeoutSeconds: 1 });
    const res = await get(server);
    for (const s of sockets) s.destroy();
    assert.equal(res.status, 503);
    assert.equal((JSON.parse(res.text) as StatusBody).message, 'the log store did not answer within 1s');
    assert.match(
      await server.registry.metrics(),
      /platform_logging_store_requests_total\{operation="search",outcome="timeout"\} 1/,
    );
  });

  test('without a configured store the endpoint is a 503 saying so; the rest of the server works', async () => {
    const server = await serve({ hosts: [] });
    const res = await get(server);
    assert.equal(res.status, 503);
    const status = JSON.parse(res.text) as StatusBody;
    assert.equal(status.kind, 'Status');
    assert.match(status.message, /logging is not configured.*logging\.hosts/);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    const removed = await fetch(`${server.url}/kapis/logging.platform.io/v1alpha2/namespaces/x`, {
      headers: { Authorization: `Bearer ${cp.admin.token}` },
    });
    assert.equal(removed.status, 404);
  });
});
