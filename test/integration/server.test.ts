import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { ControlPlane } from '../cluster/control-plane.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { makeServingCertificate } from '../support/test-certificates.ts';
import { adminKubeConfig, installIamCrds } from '../support/iam-fixtures.ts';

const run = promisify(execFile);
const mainTs = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const slowServerTs = fileURLToPath(new URL('../fixtures/slow-server.ts', import.meta.url));

describe('server process against the real kube-apiserver', () => {
  let cp: ControlPlane;
  let server: ServerProcess;
  before(async () => {
    cp = await testControlPlane();
    // Readiness also waits for the user and session caches, which need the IAM CRDs.
    await installIamCrds(adminKubeConfig(cp.kubeconfigPath));
    server = await startServerProcess([`--kubernetes.kubeconfig=${cp.kubeconfigPath}`]);
  });
  after(async () => {
    const code = await server?.stop();
    assert.equal(code, 0, 'exits 0 on SIGTERM');
  });

  test('liveness answers at once; readiness turns true once the apiserver has been reached', async () => {
    for (const path of ['/livez', '/healthz']) {
      const res = await fetch(server.url + path);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'ok');
    }
    await waitFor(
      'ready',
      async () => ((await fetch(`${server.url}/readyz`)).status === 200 ? true : undefined),
      { timeoutMs: 60_000 },
    );
    const verbose = await (await fetch(`${server.url}/readyz?verbose`)).text();
    assert.match(verbose, /\[\+\]kube-apiserver ok/);
    assert.match(verbose, /\[\+\]authz-reviews ok\n/, 'the access module reports its reviews');
    assert.match(verbose, /readyz check passed/);
  });

  test('an address it cannot listen on: one line naming it and the settings, exit 2, no stack trace', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    after(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const { port } = taken.address() as AddressInfo;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          mainTs,
          `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
          '--http.host=127.0.0.1',
          `--http.port=${port}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      // A deadline for a hung process, not a timing check.
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(
      result.stderr,
      `platform-apiserver: cannot listen on 127.0.0.1:${port} (http.host, http.port): EADDRINUSE\n`,
    );
  });

  test('/version is the kube-apiserver’s version object (what kubectl and helm read)', async () => {
    const body = (await (await fetch(`${server.url}/version`)).json()) as Record<string, string>;
    assert.equal(body['gitVersion'], `v${cp.binaries.kubeVersion.replace(/^v/, '')}`);
    assert.match(body['major'] ?? '', /^\d+$/);
    assert.equal(body['platform'] === 'platform', false, 'not the platform’s own version document');
  });

  test('unknown paths without a token are a Kubernetes Status 401; request ids are echoed and logged', async () => {
    // Authentication runs before routing, as in the kube-apiserver (authenticated: 404, see oauth-flow tests).
    const res = await fetch(`${server.url}/no/such/thing?x=1`, {
      headers: { 'X-Request-Id': 'req-abc.123' },
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-request-id'), 'req-abc.123');
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="platform"/);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body['kind'], 'Status');
    assert.equal(body['apiVersion'], 'v1');
    assert.equal(body['status'], 'Failure');
    assert.equal(body['reason'], 'Unauthorized');
    assert.equal(body['code'], 401);
    const line = await waitFor('access log line', () =>
      server.logs().find((l) => l['message'] === 'request' && l['requestId'] === 'req-abc.123'),
    );
    assert.equal(line['status'], 401);
    assert.equal(line['method'], 'GET');
    assert.equal(line['route'], 'unmatched');
    assert.equal(typeof line['durationMs'], 'number');
    assert.match(String(line['time']), /^\d{4}-\d\d-\d\dT/);

    // An unsafe request id (spaces, too long) is replaced by a generated one.
    const replaced = await fetch(`${server.url}/livez`, { headers: { 'X-Request-Id': 'x'.repeat(100) } });
    assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});

describe('configuration errors', () => {
  const startWith = async (...args: string[]) => {
    try {
      await run(process.execPath, [mainTs, ...args], {
        timeout: 60_000,
        env: { ...process.env, KUBECONFIG: '/nonexistent' },
      });
      assert.fail('expected a non-zero exit');
    } catch (err) {
      return err as { code: number; stderr: string };
    }
  };

  test('a bad value names the key and exits non-zero', async () => {
    const err = await startWith('--http.port=eighty');
    assert.equal(err.code, 2);
    assert.match(err.stderr, /invalid configuration: http\.port: expected an integer, got "eighty"/);
  });

  test('a bad environment value names the key', async () => {
    try {
      await run(process.execPath, [mainTs], {
        timeout: 60_000,
        env: { ...process.env, PLATFORM_LOG_LEVEL: 'chatty' },
      });
      assert.fail('expected a non-zero exit');
    } catch (err) {
      const e = err as { code: number; stderr: string };
      assert.equal(e.code, 2);
      assert.match(e.stderr, /log\.level: expected one of error, warn, info, debug, got "chatty"/);
    }
  });

  test('an unreadable or mismatched TLS pair names the key', async () => {
    const missing = await startWith(
      '--http.tlsCertFile=/nonexistent/tls.crt',
      '--http.tlsKeyFile=/nonexistent/tls.key',
    );
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /http\.tlsCertFile: cannot read \/nonexistent\/tls\.crt: ENOENT/);
    const a = makeServingCertificate();
    const b = makeServingCertificate();
    try {
      const mismatched = await startWith(
        `--http.tlsCertFile=${a.certFile}`,
        `--http.tlsKeyFile=${b.keyFile}`,
      );
      assert.equal(mismatched.code, 2);
      assert.match(mismatched.stderr, /http\.tlsCertFile: certificate and key do not form a usable pair/);
    } finally {
      a.cleanup();
      b.cleanup();
    }
  });

  test('an unknown kubeconfig context names the key', async () => {
    const cp = await testControlPlane();
    const err = await startWith(`--kubernetes.kubeconfig=${cp.kubeconfigPath}`, '--kubernetes.context=nope');
    assert.equal(err.code, 2);
    assert.match(err.stderr, /kubernetes\.context: context "nope" not found/);
  });
});

describe('graceful shutdown', () => {
  test('SIGTERM during a slow request: no new connections, the request finishes, exit 0', async () => {
    const server = await startServerProcess(['--grace-ms=10000'], { entry: slowServerTs });
    const slow = fetch(`${server.url}/slow?ms=1500`).then(async (r) => ({
      status: r.status,
      body: await r.text(),
    }));
    await waitFor('slow request in flight', () =>
      server.logs().find((l) => l['message'] === 'slow request started'),
    );
    server.child.kill('SIGTERM');
    await waitFor('draining', () => server.logs().find((l) => l['message'] === 'signal received'));
    await assert.rejects(fetch(`${server.url}/livez`), 'the listener is closed');
    assert.deepEqual(await slow, { status: 200, body: 'slept 1500' });
    const signalledAt = Date.now();
    assert.equal(await server.exited, 0);
    assert.ok(
      Date.now() - signalledAt < 5_000,
      'exits once the request is done, not at the end of the 10 s grace period',
    );
  });

  test('requests still running when the grace period ends are cut, and the process still exits 0', async () => {
    const server = await startServerProcess(['--grace-ms=300'], { entry: slowServerTs });
    const slow = fetch(`${server.url}/slow?ms=60000`);
    await waitFor('slow request in flight', () =>
      server.logs().find((l) => l['message'] === 'slow request started'),
    );
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    await assert.rejects(slow);
    assert.equal(await server.exited, 0);
    assert.ok(Date.now() - signalledAt < 10_000, 'exited soon after the grace period');
    assert.ok(server.logs().some((l) => l['message'] === 'grace period over, closing remaining connections'));
  });
});
