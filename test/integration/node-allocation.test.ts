import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, NodeV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import type { RawNode } from '../../src/nodes/node-view.ts';
import { PodCache } from '../../src/nodes/pod-cache.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { ControlPlane } from '../cluster/control-plane.ts';
import { nodeFixture } from '../cluster/node-fixtures.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { httpGet } from '../support/http-client.ts';
import { serverKubeConfig, startNodesServer, type NodesServer } from '../support/nodes-server.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const PREFIX = 'nalloc';
const NAMESPACE = 'default';
const RUNTIME_CLASS = `${PREFIX}-with-overhead`;
const KEY = 'node.platform.io/';
const KEYS = [
  'cpu-requests',
  'cpu-limits',
  'memory-requests',
  'memory-limits',
  'cpu-requests-fraction',
  'cpu-limits-fraction',
  'memory-requests-fraction',
  'memory-limits-fraction',
];

const node = (i: number) => `${PREFIX}-${String(i).padStart(4, '0')}`;
type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };
const container = (name: string, resources: Resources, restartPolicy?: string) => ({
  name,
  image: 'registry.example/app:1',
  resources,
  ...(restartPolicy ? { restartPolicy } : {}),
});

const cp: ControlPlane = await testControlPlane();
const silentLogger = () =>
  createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) });

describe('allocation annotations against the real kube-apiserver (bound pods, status set by hand)', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let server: NodesServer;
  let auth: Record<string, string>;

  const annotationsOf = (n: RawNode) =>
    Object.fromEntries(KEYS.map((k) => [k, n.metadata?.annotations?.[KEY + k]]));
  const listed = async () => {
    const res = await httpGet(`${server.nodesUrl}?name=${PREFIX}-&sortBy=name&ascending=true`, auth);
    assert.equal(res.status, 200);
    return res;
  };
  const fromList = async (i: number) => {
    const items = (await listed()).json<{ items: RawNode[] }>().items;
    return annotationsOf(items.find((n) => n.metadata?.name === node(i))!);
  };
  const fromGet = async (i: number) => {
    const res = await httpGet(`${server.nodesUrl}/${node(i)}`, auth);
    assert.equal(res.status, 200);
    return annotationsOf(res.json<RawNode>());
  };

  /** A pod bound to a node (no scheduler, no kubelet), then given `phase` through /status. */
  async function createPod(
    name: string,
    nodeIndex: number | undefined,
    spec: Partial<V1Pod['spec']>,
    phase?: string,
  ) {
    await core.createNamespacedPod({
      namespace: NAMESPACE,
      body: {
        metadata: { name: `${PREFIX}-${name}` },
        spec: {
          ...(nodeIndex !== undefined ? { nodeName: node(nodeIndex) } : {}),
          containers: [],
          ...spec,
        } as V1Pod['spec'],
      },
    });
    if (phase) await setPhase(name, phase);
  }
  const setPhase = (name: string, phase: string) =>
    kubeRequest(kc, `/api/v1/namespaces/${NAMESPACE}/pods/${PREFIX}-${name}/status`, {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { status: { phase } },
      timeoutMs: 10_000,
    });
  const deletePod = (name: string) =>
    core.deleteNamespacedPod({ name: `${PREFIX}-${name}`, namespace: NAMESPACE, gracePeriodSeconds: 0 });

  before(async () => {
    kc = serverKubeConfig(cp.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    auth = { Authorization: `Bearer ${cp.admin.token}` };
    // Allocatable (node-fixtures.ts): node 0: 3900m CPU, 15872Mi; node 1: 7900m, 31744Mi; node 2: 11900m, 48128Mi.
    for (const i of [0, 1, 2, 3]) await core.createNode({ body: nodeFixture(i, { prefix: PREFIX }) });
    // The RuntimeClass admission plugin copies its overhead into pods that name it.
    await kc.makeApiClient(NodeV1Api).createRuntimeClass({
      body: {
        metadata: { name: RUNTIME_CLASS },
        handler: 'runc',
        overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
      },
    });

    // Node 0: init containers and sidecars; a finished pod of each kind does not count.
    await createPod(
      'init',
      0,
      {
        initContainers: [
          container('setup', { requests: { cpu: '1', memory: '64Mi' }, limits: { cpu: '2' } }),
        ],
        containers: [
          container('a', {
            requests: { cpu: '100m', memory: '128Mi' },
            limits: { cpu: '200m', memory: '256Mi' },
          }),
          container('b', { requests: { cpu: '250m', memory: '256Mi' } }),
        ],
      },
      'Running',
    );
    await createPod(
      'sidecar',
      0,
      {
        initContainers: [
          container(
            'proxy',
            { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } },
            'Always',
          ),
        ],
        containers: [
          container('app', {
            requests: { cpu: '200m', memory: '128Mi' },
            limits: { cpu: '400m', memory: '128Mi' },
          }),
        ],
      },
      'Running',
    );
    const big = { containers: [container('x', { requests: { cpu: '5', memory: '5Gi' } })] };
    await createPod('succeeded', 0, big, 'Succeeded');
    await createPod('failed', 0, big, 'Failed');
    // Not bound to any node: counts nowhere.
    await createPod('unscheduled', undefined, big);

    // Node 1: overhead from the RuntimeClass, and pod-level resources.
    await createPod(
      'overhead',
      1,
      {
        runtimeClassName: RUNTIME_CLASS,
        containers: [container('a', { requests: { cpu: '100m', memory: '100Mi' }, limits: { cpu: '200m' } })],
      },
      'Running',
    );
    await createPod(
      'podlevel',
      1,
      {
        resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '2', memory: '2Gi' } },
        containers: [container('a', { requests: { cpu: '100m', memory: '100Mi' } })],
      },
      'Pending',
    );
    // Node 3: a pod with no resources at all.
    await createPod('empty', 3, { containers: [container('a', {})] }, 'Running');

    server = await startNodesServer({ kubeconfigPath: cp.kubeconfigPath });
    await server.cache.waitForSynced(15_000);
  });

  after(async () => {
    await server?.stop();
    const pods = await core.listNamespacedPod({ namespace: NAMESPACE });
    await Promise.all(
      pods.items
        .filter((p) => p.metadata?.name?.startsWith(`${PREFIX}-`))
        .map((p) => deletePod(p.metadata!.name!.slice(PREFIX.length + 1))),
    );
    for (const i of [0, 1, 2, 3]) await core.deleteNode({ name: node(i) }).catch(() => undefined);
    await kc
      .makeApiClient(NodeV1Api)
      .deleteRuntimeClass({ name: RUNTIME_CLASS })
      .catch(() => undefined);
  });

  test('every value, computed by hand from the pods above, in the list and in the get', async () => {
    const expected: Record<number, Record<string, string>> = {
      // init pod: requests max(100m+250m, 1) = 1 CPU, max(128Mi+256Mi, 64Mi) = 384Mi; limits max(200m, 2) = 2 CPU, 256Mi.
      // sidecar pod: requests 100m+200m = 300m, 64Mi+128Mi = 192Mi; limits 500m, 192Mi.
      // Sum: 1300m, 576Mi; limits 2500m, 448Mi. Of 3900m / 15872Mi: 33%, 64%, 3%, 2%.
      0: {
        'cpu-requests': '1300m',
        'cpu-limits': '2500m',
        'memory-requests': '576Mi',
        'memory-limits': '448Mi',
        'cpu-requests-fraction': '33%',
        'cpu-limits-fraction': '64%',
        'memory-requests-fraction': '3%',
        'memory-limits-fraction': '2%',
      },
      // overhead pod: requests 100m+250m = 350m, 100Mi+120Mi = 220Mi; limits 200m+250m = 450m, no memory limit.
      // pod-level pod: 1 CPU, 1Gi; limits 2 CPU, 2Gi. Sum: 1350m, 1244Mi; 2450m, 2Gi. Of 7900m / 31744Mi: 17%, 31%, 3%, 6%.
      1: {
        'cpu-requests': '1350m',
        'cpu-limits': '2450m',
        'memory-requests': '1244Mi',
        'memory-limits': '2Gi',
        'cpu-requests-fraction': '17%',
        'cpu-limits-fraction': '31%',
        'memory-requests-fraction': '3%',
        'memory-limits-fraction': '6%',
      },
    };
    const zero = Object.fromEntries(KEYS.map((k) => [k, k.endsWith('fraction') ? '0%' : '0']));
    expected[2] = zero; // no pods
    expected[3] = zero; // a pod without requests or limits
    for (const i of [0, 1, 2, 3]) {
      assert.deepEqual(await fromList(i), expected[i], `list, ${node(i)}`);
      assert.deepEqual(await fromGet(i), expected[i], `get, ${node(i)}`);
    }
    // The RuntimeClass admission plugin did set the overhead we count.
    const overheadPod = await core.readNamespacedPod({ name: `${PREFIX}-overhead`, namespace: NAMESPACE });
    assert.deepEqual(overheadPod.spec?.overhead, { cpu: '250m', memory: '120Mi' });
  });

  test('listed in pages of two pods (continue tokens, each item parsed on its own), the sums are the same', async () => {
    const paged = new PodCache({
      kubeConfig: serverKubeConfig(cp.kubeconfigPath),
      logger: silentLogger(),
      pageSize: 2,
    });
    paged.start();
    try {
      await paged.waitForSynced(15_000);
      assert.ok(paged.size >= 5, `${paged.size} pods cached`);
      assert.equal(paged.size, server.pods.size);
      for (const i of [0, 1, 2, 3]) {
        assert.deepEqual(paged.allocationOf(node(i)), server.pods.allocationOf(node(i)), node(i));
      }
      assert.equal(paged.allocationOf(node(0))?.cpuRequests, 1300);
    } finally {
      await paged.stop();
    }
  });

  test('a pod created, resized, finishing and deleted shows within a second; the list ETag follows', async () => {
    const within = <T>(what: string, check: () => Promise<T | undefined>) =>
      waitFor(what, check, { timeoutMs: 1000, intervalMs: 20 });
    const requests = async () => (await fromList(2))['cpu-requests'];
    const etag0 = (await listed()).headers.etag!;

    await createPod('live', 2, {
      containers: [
        container('a', { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } }),
      ],
    });
    await within('created pod counted', async () => ((await requests()) === '500m' ? true : undefined));
    assert.deepEqual(await fromGet(2), {
      'cpu-requests': '500m',
      'cpu-limits': '1',
      'memory-requests': '1Gi',
      'memory-limits': '1Gi',
      // Of 11900m / 48128Mi.
      'cpu-requests-fraction': '4%',
      'cpu-limits-fraction': '8%',
      'memory-requests-fraction': '2%',
      'memory-limits-fraction': '2%',
    });
    const etag1 = (await listed()).headers.etag!;
    assert.notEqual(etag1, etag0, 'the list ETag changes with the annotations');
    const notModified = await httpGet(`${server.nodesUrl}?name=${PREFIX}-&sortBy=name&ascending=true`, {
      ...auth,
      'If-None-Match': etag1,
    });
    assert.equal(notModified.status, 304);

    // In-place resize (no kubelet here: the desired resources are what counts).
    await kubeRequest(kc, `/api/v1/namespaces/${NAMESPACE}/pods/${PREFIX}-live/resize`, {
      method: 'PATCH',
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { containers: [{ name: 'a', resources: { requests: { cpu: '700m' } } }] } },
      timeoutMs: 10_000,
    });
    await within('resized pod counted', async () => ((await requests()) === '700m' ? true : undefined));

    await setPhase('live', 'Running');
    await setPhase('live', 'Succeeded');
    await within('finished pod no longer counted', async () =>
      (await requests()) === '0' ? true : undefined,
    );

    await createPod('live2', 2, { containers: [container('a', { requests: { cpu: '50m' } })] }, 'Running');
    await within('second pod counted', async () => ((await requests()) === '50m' ? true : undefined));
    await deletePod('live2');
    await within('deleted pod gone', async () => ((await requests()) === '0' ? true : undefined));
    assert.equal((await fromGet(2))['memory-requests'], '0');
  });
});
