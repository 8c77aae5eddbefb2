import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { instrumentKubeConfig } from '../../src/cluster/kube-client-metrics.ts';
import { upstreamRequestDuration } from '../../src/observability/upstream-metrics.ts';
import type { ControlPlane } from '../cluster/control-plane.ts';
import { freePort } from '../cluster/free-port.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

async function count(registry: Registry, labels: Record<string, string>): Promise<number> {
  const metric = await registry.getSingleMetric('platform_upstream_request_duration_seconds')!.get();
  return metric.values
    .filter((v) => (v as { metricName?: string }).metricName?.endsWith('_count'))
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}

function instrumented(cp: ControlPlane, context: string): { kc: KubeConfig; registry: Registry } {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  kc.setCurrentContext(context);
  const registry = new Registry();
  instrumentKubeConfig(kc, upstreamRequestDuration(registry));
  return { kc, registry };
}

// At the top level, so a private control plane (file run alone) is stopped after all tests of the file.
const cp = await testControlPlane();

describe('kube-apiserver request metrics from @kubernetes/client-node', () => {
  test('API client calls are observed by Kubernetes verb and status code', async () => {
    const { kc, registry } = instrumented(cp, 'admin');
    const core = kc.makeApiClient(CoreV1Api);
    await core.listNode();
    await assert.rejects(
      core.readNode({ name: 'kcm-no-such-node' }),
      (e: { code?: number }) => e.code === 404,
    );
    assert.equal(await count(registry, { source: 'client', verb: 'LIST', code: '200' }), 1);
    assert.equal(await count(registry, { source: 'client', verb: 'GET', code: '404' }), 1);

    const alice = instrumented(cp, 'alice');
    await assert.rejects(
      alice.kc.makeApiClient(CoreV1Api).listNode(),
      (e: { code?: number }) => e.code === 403,
    );
    assert.equal(await count(alice.registry, { verb: 'LIST', code: '403' }), 1);
  });

  test('a watch is observed when its response starts, not when it ends', async () => {
    const { kc, registry } = instrumented(cp, 'admin');
    const watch = new Watch(kc);
    const request = await watch.watch(
      '/api/v1/nodes',
      { timeoutSeconds: 60 },
      () => {},
      () => {},
    );
    try {
      await waitFor('watch observed', async () =>
        (await count(registry, { verb: 'WATCH', code: '200' })) === 1 ? true : undefined,
      );
    } finally {
      request.abort();
    }
  });

  test('an unreachable kube-apiserver is observed with code "error"', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    const port = await freePort();
    kc.clusters = kc.clusters.map((c) => ({ ...c, server: `https://127.0.0.1:${port}` }));
    const registry = new Registry();
    instrumentKubeConfig(kc, upstreamRequestDuration(registry));
    await assert.rejects(kc.makeApiClient(CoreV1Api).listNode());
    assert.equal(await count(registry, { verb: 'LIST', code: 'error' }), 1);
  });
});
