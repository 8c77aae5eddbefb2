import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Pool } from 'undici';
import { UndiciExchange, upstreamHeaders } from '../../src/kube-proxy/undici-exchange.ts';

/** What a client saw: status, headers and body, or the error that ended the response. */
interface Seen {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  error?: Error;
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

function get(url: string, onHeaders?: (res: http.IncomingMessage) => void): Promise<Seen> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        onHeaders?.(res);
        const chunks: Buffer[] = [];
        const seen = () => ({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) });
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(seen()));
        res.on('error', (error) => resolve({ ...seen(), error }));
      })
      .on('error', reject);
  });
}

/** A body in many small writes, as the kube-apiserver sends a list (2 kB HTTP chunks). */
function chunkedBody(bytes: number): Buffer {
  return Buffer.from(Array.from({ length: bytes / 100 }, (_, i) => String(i).padEnd(100, '.')).join(''));
}

describe('relaying the kube-apiserver’s answer through undici', () => {
  const upstreams = new Map<string, (res: http.ServerResponse) => void>();
  const broken: string[] = [];
  const upstreamClosed: string[] = [];
  let upstream: http.Server;
  let pool: Pool;
  let proxy: http.Server;
  let upstreamUrl: string;
  let proxyUrl: string;

  before(async () => {
    upstream = http.createServer((req, res) => {
      req.socket.once('close', () => upstreamClosed.push(req.url!));
      upstreams.get(req.url!)!(res);
    });
    upstreamUrl = await listen(upstream);
    pool = new Pool(upstreamUrl);
    proxy = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const exchange = new UndiciExchange(res, {
        collectUpTo: Number(url.searchParams.get('collect') ?? 0),
        onAnswer: () => {},
        onFailure: (_err, answered) => {
          if (answered) broken.push(req.url!);
          res.statusCode = 502;
          res.end('broken');
        },
      });
      res.once('close', () => exchange.stop());
      pool.dispatch(
        { path: url.pathname, method: 'GET', headers: upstreamHeaders(req, new URL(upstreamUrl).host) },
        exchange,
      );
    });
    proxyUrl = await listen(proxy);
  });
  after(async () => {
    await pool.destroy();
    proxy.closeAllConnections();
    upstream.closeAllConnections();
    proxy.close();
    upstream.close();
  });

  const body = chunkedBody(30_000);
  upstreams.set('/list', (res) => {
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Audit-Id', 'a1');
    res.setHeader('Connection', 'keep-alive, X-Hop');
    res.setHeader('X-Hop', 'for this connection only');
    for (let i = 0; i < body.length; i += 2048) res.write(body.subarray(i, i + 2048));
    res.end();
  });

  test('an answer within the bound arrives in one piece with its length; connection headers stay behind', async () => {
    const seen = await get(`${proxyUrl}/list?collect=262144`);
    assert.equal(seen.status, 200);
    assert.ok(seen.body.equals(body), 'the bytes are the upstream’s');
    assert.equal(seen.headers['content-length'], String(body.length));
    assert.equal(seen.headers['transfer-encoding'], undefined);
    assert.equal(seen.headers['audit-id'], 'a1');
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.equal(
      seen.headers['x-hop'],
      undefined,
      'a header the upstream named in Connection is not relayed',
    );
  });

  test('an answer larger than the bound, or not to be collected, streams and arrives whole', async () => {
    for (const collect of [10_000, 0]) {
      const seen = await get(`${proxyUrl}/list?collect=${collect}`);
      assert.equal(seen.status, 200);
      assert.ok(seen.body.equals(body), `collect=${collect}: the bytes are the upstream’s`);
      assert.equal(seen.headers['content-length'], undefined);
      assert.equal(seen.headers['transfer-encoding'], 'chunked');
    }
  });

  test('a stream’s headers reach the client before its first byte', async () => {
    let release!: () => void;
    upstreams.set('/watch', (res) => {
      res.setHeader('Content-Type', 'application/json');
      res.flushHeaders();
      release = () => res.end('{"type":"ADDED"}\n');
    });
    const seen = await get(`${proxyUrl}/watch?collect=0`, () => release());
    assert.equal(seen.body.toString(), '{"type":"ADDED"}\n');
  });

  test('an answer that breaks off while collected becomes an error answer; while streamed, a cut one', async () => {
    upstreams.set('/cut', (res) => {
      res.setHeader('Content-Type', 'application/json');
      res.write('{"kind":"List","items":[');
      setImmediate(() => res.destroy());
    });
    upstreams.set('/cut-with-length', (res) => {
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Content-Length', 1000);
      res.write('{"kind":"List","items":[');
      setImmediate(() => res.destroy());
    });
    for (const path of ['/cut', '/cut-with-length']) {
      const collected = await get(`${proxyUrl}${path}?collect=262144`);
      assert.equal(collected.status, 502, path);
      assert.equal(collected.body.toString(), 'broken', `${path}: the error answer, whole`);
      assert.equal(
        collected.headers['content-type'],
        undefined,
        `${path}: none of the broken answer’s headers`,
      );
    }
    assert.deepEqual(broken, ['/cut?collect=262144', '/cut-with-length?collect=262144']);

    const streamed = await get(`${proxyUrl}/cut?collect=0`);
    assert.equal(streamed.status, 200);
    assert.ok(streamed.error, 'the client sees the stream cut, not a complete answer');
  });

  test('a client that goes away ends the upstream request', async () => {
    upstreams.set('/forever', (res) => {
      res.setHeader('Content-Type', 'application/json');
      res.flushHeaders();
    });
    await new Promise<void>((resolve) => {
      const req = http.get(`${proxyUrl}/forever?collect=0`, { agent: false }, () => req.destroy());
      req.on('close', resolve);
    });
    const deadline = Date.now() + 5000;
    while (!upstreamClosed.includes('/forever') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(upstreamClosed.includes('/forever'), 'the upstream connection was closed');
  });
});
