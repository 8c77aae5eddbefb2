import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Writable } from 'node:stream';
import { CoreV1Api, type V1Node } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { createCacheMetrics } from '../../src/cluster/cache-metrics.ts';
import { Informer, kubeWatch } from '../../src/cluster/informer.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { createNodes, nodeFixture } from '../cluster/node-fixtures.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { serverKubeConfig } from '../support/nodes-server.ts';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.ts';

const PREFIX = 'infx';

/** etcd's JSON gateway (the v3 API over HTTP): the current revision, and a compaction up to it. */
async function etcdCall<T>(etcdUrl: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${etcdUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${path}: ${text}`);
  return JSON.parse(text) as T;
}
async function compactEtcd(etcdUrl: string): Promise<number> {
  const range = await etcdCall<{ header: { revision: string } }>(etcdUrl, '/v3/kv/range', {
    key: Buffer.from('/').toString('base64'),
    count_only: true,
  });
  const revision = Number(range.header.revision);
  await etcdCall(etcdUrl, '/v3/kv/compaction', { revision: String(revision), physical: true });
  return revision;
}

// A private control plane without the watch cache: a watch resumed from a resourceVersion that etcd has
// compacted away then reaches etcd and is refused with 410 Gone (the watch cache would serve it from memory).
const cp: ControlPlane = await startControlPlane({ apiserverArgs: ['--watch-cache=false'] });
after(() => cp.stop());

describe('informer: a resumed watch answered 410 Gone (etcd compacted, watch cache off)', () => {
  let core: CoreV1Api;
  let gate: TcpGate;
  let informer: Informer<V1Node>;
  const registry = new Registry();
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'info',
    stream: new Writable({
      write: (chunk: Buffer, _e, cb) => {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
          logs.push(JSON.parse(line) as Record<string, unknown>);
        cb();
      },
    }),
  });
  const counter = async (name: string) => {
    const text = await registry.getSingleMetricAsString(name);
    return Number(/\{kind="nodes"\} (\d+)/.exec(text)?.[1] ?? 0);
  };
  const names = () =>
    informer
      .list()
      .map((n) => n.metadata!.name!)
      .filter((n) => n.startsWith(`${PREFIX}-`))
      .sort();

  before(async () => {
    core = serverKubeConfig(cp.kubeconfigPath).makeApiClient(CoreV1Api);
    await createNodes(core, 5, { prefix: PREFIX });
    gate = await startTcpGate('127.0.0.1', Number(new URL(cp.server).port));
    const kc = serverKubeConfig(cp.kubeconfigPath, `https://${gate.address}`);
    informer = new Informer<V1Node>({
      kind: 'nodes',
      list: () => core.listNode(),
      watch: kubeWatch(kc, '/api/v1/nodes'),
      logger,
      metrics: createCacheMetrics(registry),
      // Long: after the cut the informer waits (one failure, no relist yet) while the test rewrites history.
      initialBackoffMs: 20_000,
      maxBackoffMs: 20_000,
    });
    informer.start();
    await informer.waitForSynced(15_000);
  });
  after(async () => {
    await informer?.stop();
    await gate?.stop();
  });

  test('the informer relists on 410 and converges on the current state', async () => {
    assert.deepEqual(names(), ['infx-0000', 'infx-0001', 'infx-0002', 'infx-0003', 'infx-0004']);
    const relistsBefore = await counter('platform_cache_relists_total');
    // The watch is open: an event proves it before we cut it.
    await core.createNode({ body: nodeFixture(10, { prefix: PREFIX }) });
    await waitFor('the watch delivers', () => (informer.get(`${PREFIX}-0010`) ? true : undefined));
    const seenVersion = informer.resourceVersion;

    gate.close();
    await waitFor('the watch is cut', () => (informer.freshness().connected ? undefined : true));
    // Changes the informer cannot see, then etcd forgets the history its resumed watch would need.
    await core.deleteNode({ name: `${PREFIX}-0001` });
    await core.createNode({ body: nodeFixture(11, { prefix: PREFIX }) });
    await core.patchNode({
      name: `${PREFIX}-0002`,
      body: [{ op: 'add', path: '/metadata/labels/infx.test~1changed', value: 'yes' }],
    });
    const compactedAt = await compactEtcd(cp.etcdUrl);
    assert.ok(compactedAt > Number(seenVersion), `compacted at ${compactedAt}, informer at ${seenVersion}`);
    gate.open();

    await waitFor(
      'the watch expired and the informer relisted',
      async () =>
        logs.some((l) => l['message'] === 'watch expired, relisting') &&
        (await counter('platform_cache_relists_total')) > relistsBefore &&
        informer.freshness().connected
          ? true
          : undefined,
      { timeoutMs: 40_000, intervalMs: 200 },
    );
    assert.deepEqual(names(), ['infx-0000', 'infx-0002', 'infx-0003', 'infx-0004', 'infx-0010', 'infx-0011']);
    assert.equal(informer.get(`${PREFIX}-0002`)?.metadata?.labels?.['infx.test/changed'], 'yes');
    assert.ok(Number(informer.resourceVersion) >= compactedAt, 'current as of at least the compaction');
    // The 410 path, not the "relist after repeated failures" one: one failed attempt at most.
    assert.ok((await counter('platform_cache_watch_restarts_total')) < 3);

    // And the watch after the relist is live again.
    await core.deleteNode({ name: `${PREFIX}-0003` });
    await waitFor('the resumed watch delivers', () => (informer.get(`${PREFIX}-0003`) ? undefined : true));
  });
});
