// The access log of the real server: batched output loses nothing on a graceful stop, and the default
// policy keeps exceptional requests while sampling routine ones.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { adminKubeConfig, installIamCrds } from '../support/iam-fixtures.ts';
import { startServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const cp = await testControlPlane();
const accessLines = (logs: Record<string, unknown>[], prefix: string) =>
  logs.filter((l) => l['message'] === 'request' && String(l['requestId']).startsWith(prefix));

async function send(url: string, path: string, requestId: string): Promise<number> {
  const res = await fetch(`${url}${path}`, { headers: { 'X-Request-Id': requestId } });
  await res.arrayBuffer();
  return res.status;
}

describe('access log of the real server', () => {
  // The login below must reach the password check (a 400), which needs the chart's IAM CRDs.
  before(() => installIamCrds(adminKubeConfig(cp.kubeconfigPath)));

  test('every line buffered at SIGTERM is written before the process exits', async () => {
    const server = await startServerProcess([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      '--log.access.mode=all',
    ]);
    const count = 300;
    for (let i = 0; i < count; i += 30) {
      await Promise.all(
        Array.from({ length: 30 }, (_, j) => send(server.url, '/healthz', `al-stop-${i + j}`)),
      );
    }
    // At once: the last lines are still in the buffer (it is written every 200 ms or 64 kB).
    assert.equal(await server.stop(15_000), 0);
    const lines = accessLines(server.logs(), 'al-stop-');
    assert.equal(lines.length, count);
    assert.equal(new Set(lines.map((l) => l['requestId'])).size, count);
    assert.ok(
      server.logs().some((l) => l['message'] === 'stopped'),
      'the last line of a graceful stop',
    );
  });

  test('default (sampled): probes sampled one in 100 and marked, every refusal and login kept', async () => {
    const server = await startServerProcess([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      '--auth.addressRequestsPerMinute=0',
    ]);
    try {
      for (let i = 0; i < 200; i += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, j) => send(server.url, '/healthz', `al-probe-${i + j}`)),
        );
      }
      for (let i = 0; i < 5; i++)
        assert.equal(
          await send(server.url, '/kapis/resources.platform.io/v1alpha3/nodes', `al-401-${i}`),
          401,
        );
      const login = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Request-Id': 'al-login-0' },
        body: new URLSearchParams({
          grant_type: 'password',
          username: 'al-nobody',
          password: 'x',
          client_id: 'platform',
          client_secret: 'platform',
        }).toString(),
      });
      assert.equal(login.status, 400);
    } finally {
      await server.stop(15_000);
    }
    const probes = accessLines(server.logs(), 'al-probe-');
    assert.equal(probes.length, 2, 'one routine request in 100');
    assert.ok(probes.every((l) => l['sampled'] === 100));
    assert.equal(accessLines(server.logs(), 'al-401-').length, 5, 'authentication failures always');
    const login = accessLines(server.logs(), 'al-login-');
    assert.equal(login.length, 1, 'token requests always');
    assert.equal(login[0]!['sampled'], undefined);
  });
});
