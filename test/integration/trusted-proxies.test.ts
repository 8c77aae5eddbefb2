import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { waitFor } from '../cluster/wait-for.ts';
import { startNginx, type ReverseProxy } from '../support/nginx.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

// Loopback is a whole /8 on Linux, so three distinct addresses play three roles:
const CLIENT = '127.0.0.2'; // the real client
const PROXY = '127.0.0.3'; // nginx's source address towards the server (proxy_bind)
const FORGED = '203.0.113.7'; // what a client claims in X-Forwarded-For

/** GET /healthz from `localAddress`; returns the access-log line the server wrote for it. */
async function requestVia(
  server: ServerProcess,
  url: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const requestId = `tp-${randomUUID()}`;
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.get(
      `${url}/healthz`,
      { localAddress, headers: { ...headers, 'X-Request-Id': requestId }, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
  });
  assert.equal(status, 200);
  return waitFor(`access log line of ${requestId}`, () =>
    server.logs().find((l) => l['message'] === 'request' && l['requestId'] === requestId),
  );
}

describe('client address behind a real nginx reverse proxy', () => {
  let trusting: ServerProcess;
  let trustingProxy: ReverseProxy;
  let untrusting: ServerProcess;
  let untrustingProxy: ReverseProxy;

  before(async () => {
    const cp = await testControlPlane();
    // Every request logged: the assertions read the access lines of successful probes.
    const kubeconfig = `--kubernetes.kubeconfig=${cp.kubeconfigPath}`;
    trusting = await startServerProcess([
      kubeconfig,
      '--log.access.mode=all',
      `--http.trustedProxies=${PROXY}`,
    ]);
    trustingProxy = await startNginx({ upstream: trusting.url, bindAddress: PROXY });
    untrusting = await startServerProcess([kubeconfig, '--log.access.mode=all']);
    untrustingProxy = await startNginx({ upstream: untrusting.url, bindAddress: PROXY });
  });
  after(async () => {
    await Promise.all([trustingProxy?.stop(), untrustingProxy?.stop()]);
    await Promise.all([trusting?.stop(), untrusting?.stop()]);
  });

  test('through a trusted proxy, the access log shows the real client', async () => {
    const line = await requestVia(trusting, trustingProxy.url, CLIENT);
    assert.equal(line['remoteAddress'], CLIENT);
  });

  test('through a trusted proxy, an X-Forwarded-For the client forged is not believed', async () => {
    // nginx appends the peer it saw: "203.0.113.7, 127.0.0.2"; only the proxy's own entry counts.
    const line = await requestVia(trusting, trustingProxy.url, CLIENT, { 'X-Forwarded-For': FORGED });
    assert.equal(line['remoteAddress'], CLIENT);
  });

  test('straight to the server, a client cannot claim another address', async () => {
    const line = await requestVia(trusting, trusting.url, CLIENT, { 'X-Forwarded-For': FORGED });
    assert.equal(line['remoteAddress'], CLIENT);
  });

  test('the header is believed because of where the connection comes from, not what it says', async () => {
    // A connection from the trusted address is a proxy by definition: its X-Forwarded-For counts.
    const line = await requestVia(trusting, trusting.url, PROXY, { 'X-Forwarded-For': '198.51.100.4' });
    assert.equal(line['remoteAddress'], '198.51.100.4');
  });

  test('with no trusted proxy configured (the default), the proxy itself is the client', async () => {
    const viaProxy = await requestVia(untrusting, untrustingProxy.url, CLIENT, { 'X-Forwarded-For': FORGED });
    assert.equal(viaProxy['remoteAddress'], PROXY);
    const direct = await requestVia(untrusting, untrusting.url, CLIENT, { 'X-Forwarded-For': FORGED });
    assert.equal(direct['remoteAddress'], CLIENT);
  });
});

describe('the login limiter behind a real nginx reverse proxy', () => {
  let server: ServerProcess;
  let proxy: ReverseProxy;
  const OTHER_CLIENT = '127.0.0.4';

  before(async () => {
    const cp = await testControlPlane();
    server = await startServerProcess([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--http.trustedProxies=${PROXY}`,
      '--log.access.mode=all',
      '--auth.addressRequestsPerMinute=2',
    ]);
    proxy = await startNginx({ upstream: server.url, bindAddress: PROXY });
  });
  after(async () => {
    await proxy?.stop();
    await server?.stop();
  });

  /** A password grant with wrong credentials from `localAddress` through nginx; returns the status. */
  const tokenRequest = (localAddress: string, forwardedFor: string) =>
    new Promise<number>((resolve, reject) => {
      const body = new URLSearchParams({
        grant_type: 'password',
        username: 'nobody',
        password: 'wrong',
        client_id: 'platform',
        client_secret: 'platform',
      }).toString();
      const req = http.request(
        `${proxy.url}/oauth/token`,
        {
          method: 'POST',
          localAddress,
          agent: false,
          headers: {
            'Content-Type': 'application/x-www-form-urlencoded',
            'Content-Length': Buffer.byteLength(body),
            'X-Forwarded-For': forwardedFor,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  test('counts the real client, whatever X-Forwarded-For it sends, and no one else', async () => {
    // A new forged address on every request does not give the client a fresh bucket.
    assert.notEqual(await tokenRequest(CLIENT, '198.51.100.1'), 429);
    assert.notEqual(await tokenRequest(CLIENT, '198.51.100.2'), 429);
    assert.equal(await tokenRequest(CLIENT, '198.51.100.3'), 429);
    // Another client behind the same proxy has its own bucket.
    assert.notEqual(await tokenRequest(OTHER_CLIENT, '198.51.100.3'), 429);
  });
});
