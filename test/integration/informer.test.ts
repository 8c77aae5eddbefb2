import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Writable } from 'node:stream';
import { CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { createCacheMetrics } from '../../src/cluster/cache-metrics.ts';
import { Informer, kubeWatch } from '../../src/cluster/informer.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { createNodes, nodeFixture } from '../cluster/node-fixtures.ts';
import { waitFor } from '../cluster/wait-for.ts';

const silent = createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) });

describe('informer against a real kube-apiserver', () => {
  // A private control plane: this file stops and restarts its apiserver.
  let cp: ControlPlane;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let informer: Informer<V1Node>;
  const registry = new Registry();

  before(async () => {
    cp = await startControlPlane();
    kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    await createNodes(core, 25, { prefix: 'inf' });
    informer = new Informer<V1Node>({
      kind: 'nodes',
      list: () => core.listNode(),
      watch: kubeWatch(kc, '/api/v1/nodes'),
      transform: (node) => ({ ...node, metadata: { ...node.metadata, managedFields: undefined } }),
      logger: silent,
      metrics: createCacheMetrics(registry),
      initialBackoffMs: 100,
      maxBackoffMs: 1000,
    });
    informer.start();
  });
  after(async () => {
    await informer?.stop();
    await cp?.stop();
  });

  test('syncs the full list, without managedFields', async () => {
    await informer.waitForSynced(10_000);
    assert.equal(informer.size, 25);
    const node = informer.get('inf-0003');
    assert.equal(node?.metadata?.managedFields, undefined);
    assert.equal(node?.status?.nodeInfo?.kubeletVersion, 'v1.36.3');
    assert.throws(() => {
      (node!.metadata!.labels as Record<string, string>)['x'] = 'y';
    }, TypeError);
  });

  test('follows creates, status updates and deletes as they happen', async () => {
    const seen: string[] = [];
    const unsubscribe = informer.onEvent((type, node) => seen.push(`${type} ${node.metadata?.name}`));
    await core.createNode({ body: nodeFixture(100, { prefix: 'inf' }) });
    await core.patchNodeStatus({
      name: 'inf-0003',
      body: [{ op: 'replace', path: '/status/capacity/pods', value: '250' }],
    });
    await core.deleteNode({ name: 'inf-0004' });
    await waitFor('events arrive', () => (seen.length >= 3 ? true : undefined), { timeoutMs: 10_000 });
    unsubscribe();
    assert.deepEqual(seen, ['ADDED inf-0100', 'MODIFIED inf-0003', 'DELETED inf-0004']);
    assert.equal(informer.get('inf-0003')?.status?.capacity?.['pods'], '250');
    assert.equal(informer.get('inf-0004'), undefined);
  });

  test('a watch that hears nothing for its silence limit ends with an error saying so; one its owner aborts ends once', async () => {
    const { metadata } = await core.listNamespacedConfigMap({ namespace: 'default' });
    const query = { resourceVersion: metadata?.resourceVersion ?? '', timeoutSeconds: 300 };
    // No config map has this name: the stream stays silent (bookmarks come about once a minute).
    const quiet = kubeWatch(kc, '/api/v1/namespaces/default/configmaps', 1_000, {
      fieldSelector: 'metadata.name=never-created',
    });
    const silence = await new Promise<unknown>((resolve) => void quiet(query, () => {}, resolve));
    assert.match(String(silence), /no bytes for 1000 ms/);

    const ends: unknown[] = [];
    const handle = await kubeWatch(kc, '/api/v1/nodes')(
      query,
      () => {},
      (err) => ends.push(err),
    );
    handle.abort();
    handle.abort();
    assert.deepEqual(ends, [null], 'onDone once, without an error');
  });

  test('serves the last known state while the apiserver is down, reports staleness, and catches up when it returns', async () => {
    await cp.stopApiserver();
    await waitFor('watch noticed the outage', () => (informer.freshness().connected ? undefined : true), {
      timeoutMs: 10_000,
    });
    assert.equal(informer.get('inf-0001')?.metadata?.name, 'inf-0001', 'cached objects are still served');
    await waitFor(
      'staleness is reported',
      () => (informer.freshness().staleSeconds >= 1 ? true : undefined),
      { timeoutMs: 5_000 },
    );
    const metrics = await registry.getSingleMetricAsString('platform_cache_watch_connected');
    assert.match(metrics, /platform_cache_watch_connected\{kind="nodes"\} 0/);

    await cp.startApiserver();
    await core.createNode({ body: nodeFixture(101, { prefix: 'inf' }) });
    await waitFor('caught up after the outage', () => (informer.get('inf-0101') ? true : undefined), {
      timeoutMs: 30_000,
    });
    await waitFor('connected again', () => (informer.freshness().connected ? true : undefined), {
      timeoutMs: 10_000,
    });
    assert.equal(informer.freshness().staleSeconds, 0);
    const restarts = await registry.getSingleMetricAsString('platform_cache_watch_restarts_total');
    assert.match(restarts, /platform_cache_watch_restarts_total\{kind="nodes"\} [1-9]/);
  });
});
