// The server's own requests to the kube-apiserver share one keep-alive pool: counted as TCP connections
// through a forwarder in front of the real kube-apiserver.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { instrumentKubeConfig } from '../../src/cluster/kube-client-metrics.ts';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { shareKubeDispatcher } from '../../src/cluster/upstream-agent.ts';
import { upstreamRequestDuration } from '../../src/observability/upstream-metrics.ts';
import { serverKubeConfig } from '../support/nodes-server.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { startTcpGate } from '../support/tcp-gate.ts';

const cp = await testControlPlane();

async function throughGate(share: boolean) {
  const url = new URL(cp.server);
  const gate = await startTcpGate(url.hostname, Number(url.port));
  const kc = serverKubeConfig(cp.kubeconfigPath, `https://${gate.address}`);
  if (share) assert.equal(shareKubeDispatcher(kc), true, 'the library still has the method we replace');
  instrumentKubeConfig(kc, upstreamRequestDuration(new Registry()));
  const core = kc.makeApiClient(CoreV1Api);
  try {
    for (let i = 0; i < 10; i++) {
      await kubeRequest(kc, '/api/v1/namespaces/default', { timeoutMs: 10_000 });
      await core.readNamespace({ name: 'default' });
    }
    // Concurrent requests may open a few more connections, never one per request.
    await Promise.all(
      Array.from({ length: 10 }, () => kubeRequest(kc, '/api/v1/namespaces/default', { timeoutMs: 10_000 })),
    );
    return gate.accepted;
  } finally {
    await gate.stop();
  }
}

describe('one connection pool for the server’s kube-apiserver requests', () => {
  test('sequential requests of raw and typed clients reuse one connection', async () => {
    const shared = await throughGate(true);
    assert.ok(shared <= 11, `${shared} connections for 30 requests`);
    assert.ok(shared >= 1);
  });

  test('without it, client-node opens a connection per request (what the sharing fixes)', async () => {
    const unshared = await throughGate(false);
    assert.ok(unshared >= 20, `${unshared} connections for 30 requests`);
  });
});
