import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PrometheusClient } from '../../src/monitoring/prometheus-client.ts';
import { waitFor } from '../cluster/wait-for.ts';

// A small stand-in for Prometheus' query endpoint (the client's bounds are pure logic; the real
// Prometheus is in test/integration/monitoring-prometheus.test.ts): it holds each answer until released.
describe('PrometheusClient bounds', () => {
  let server: http.Server;
  let url: string;
  let inFlight = 0;
  let most = 0;
  let served = 0;
  /** Requests by their query text. */
  const asked = new Map<string, number>();
  let holding = true;
  const held: (() => void)[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      served++;
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const q = new URLSearchParams(body).get('query') ?? '';
        asked.set(q, (asked.get(q) ?? 0) + 1);
      });
      const answer = () => {
        inFlight--;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } }));
      };
      if (holding) held.push(answer);
      else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const releaseAll = async (until: () => boolean) => {
    while (!until()) {
      held.splice(0).forEach((f) => f());
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  test('at most maxConcurrent calls at once; identical calls share one', async () => {
    const client = new PrometheusClient({ endpoint: url, timeoutMs: 5000, maxConcurrent: 2, cacheTtlMs: 0 });
    holding = true;
    most = 0;
    served = 0;
    let done = 0;
    const calls = [1, 2, 3, 4, 5, 5, 5].map((t) => client.query('up', t).then(() => done++));
    await waitFor('two calls at Prometheus', () => (inFlight === 2 ? true : undefined), { timeoutMs: 5000 });
    await releaseAll(() => done === calls.length);
    await Promise.all(calls);
    assert.equal(most, 2);
    assert.equal(served, 5);
    await client.close();
  });

  test('a call still waiting when its timeout ends fails within it, and no slot is lost', async () => {
    const client = new PrometheusClient({ endpoint: url, timeoutMs: 200, maxConcurrent: 1, cacheTtlMs: 0 });
    holding = true;
    const first = client.query('a', 1).then(
      () => 'answered',
      (err: Error) => err.message,
    );
    const second = client.query('b', 1).then(
      () => 'answered',
      (err: Error) => err.message,
    );
    // The second waits for the first's slot; both are over when their common timeout is.
    assert.equal(await first, 'Prometheus did not answer within 0.2s');
    assert.match(await second, /^(no Prometheus query slot|Prometheus did not answer) within 0\.2s/);
    held.splice(0).forEach((f) => f());
    holding = false;
    assert.deepEqual(await client.query('c', 1), { resultType: 'vector', result: [] });
    await client.close();
  });

  test('an answer is reused within the cache lifetime, asked again after it', async () => {
    let clock = 0;
    const client = new PrometheusClient({
      endpoint: url,
      timeoutMs: 5000,
      maxConcurrent: 4,
      cacheTtlMs: 1000,
      now: () => clock,
    });
    holding = false;
    await client.query('cached', 7);
    clock = 500;
    await client.query('cached', 7);
    assert.equal(asked.get('cached'), 1);
    clock = 1500;
    await client.query('cached', 7);
    assert.equal(asked.get('cached'), 2);
    await client.close();
  });
});
