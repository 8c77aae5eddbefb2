import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import type { RawNode } from '../../src/nodes/node-view.ts';
import { STALE_HEADER } from '../../src/nodes/nodes-routes.ts';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { createNodes, nodeFixture } from '../cluster/node-fixtures.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { httpGet, type RawResponse } from '../support/http-client.ts';
import { serverKubeConfig, startNodesServer, type NodesServer } from '../support/nodes-server.ts';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.ts';

const PREFIX = 'nout';

interface ListBody {
  items: RawNode[];
  totalItems: number;
}

// A private control plane: this file stops and restarts its kube-apiserver.
const cp: ControlPlane = await startControlPlane();
after(() => cp.stop());

describe('node API while the kube-apiserver is away', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let gate: TcpGate;
  let server: NodesServer;
  let admin: Record<string, string>;

  const get = (query = ''): Promise<RawResponse> =>
    httpGet(`${server.nodesUrl}?name=${PREFIX}-${query}`, admin);
  const readyz = async () => (await httpGet(`${server.url}/readyz?verbose`)).body.toString();

  /** Name → resourceVersion of our nodes as the kube-apiserver has them. */
  const directVersions = async () => {
    const listed = await kubeRequest<{ items: RawNode[] }>(kc, '/api/v1/nodes', { timeoutMs: 10_000 });
    return Object.fromEntries(
      listed.items
        .filter((n) => n.metadata!.name!.startsWith(`${PREFIX}-`))
        .map((n) => [n.metadata!.name!, n.metadata!.resourceVersion!]),
    );
  };
  const servedVersions = (body: ListBody) =>
    Object.fromEntries(body.items.map((n) => [n.metadata!.name!, n.metadata!.resourceVersion!]));

  before(async () => {
    kc = serverKubeConfig(cp.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    admin = { Authorization: `Bearer ${cp.admin.token}` };
    await createNodes(core, 12, { prefix: PREFIX });
    // Our server reaches the apiserver only through the gate, so the test decides when it can.
    const port = Number(new URL(cp.server).port);
    gate = await startTcpGate('127.0.0.1', port);
  });
  after(async () => {
    await server?.stop();
    await gate?.stop();
  });

  test('not ready and 503 until the first list has synced', async () => {
    gate.close();
    server = await startNodesServer({
      kubeconfigPath: cp.kubeconfigPath,
      server: `https://${gate.address}`,
      allowedTtlMs: 1000,
    });
    const unready = await httpGet(`${server.url}/readyz`);
    assert.equal(unready.status, 503);
    assert.match(await readyz(), /\[-\]nodes-cache failed/);
    const early = await get();
    assert.equal(early.status, 503);
    assert.equal(early.json<{ kind: string }>().kind, 'Status');
    assert.equal(early.headers['retry-after'], '1');

    gate.open();
    await waitFor(
      'ready after the first sync',
      async () => ((await httpGet(`${server.url}/readyz`)).status === 200 ? true : undefined),
      { timeoutMs: 15_000 },
    );
    assert.match(await readyz(), /\[\+\]nodes-cache ok/);
    const body = (await get()).json<ListBody>();
    assert.equal(body.totalItems, 12);
    assert.deepEqual(servedVersions(body), await directVersions());
  });

  test('apiserver stopped: cached answers keep coming, staleness is reported; after it returns with changes made meanwhile, the list matches a direct LIST', async () => {
    const before = await get();
    assert.equal(before.status, 200);
    assert.equal(before.headers[STALE_HEADER.toLowerCase()], undefined, 'no staleness while connected');
    const cachedBody = before.json<ListBody>();
    assert.equal((await httpGet(`${server.nodesUrl}/${PREFIX}-0003`, admin)).status, 200);

    gate.close();
    await cp.stopApiserver();

    const stale = await waitFor(
      'staleness reported',
      async () => {
        const res = await get();
        assert.equal(res.status, 200, 'still answering from the cache');
        const seconds = res.headers[STALE_HEADER.toLowerCase()];
        return seconds !== undefined && Number(seconds) >= 2 ? res : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    assert.deepEqual(stale.json<ListBody>(), cachedBody, 'the last known state');
    const single = await httpGet(`${server.nodesUrl}/${PREFIX}-0003`, admin);
    assert.equal(single.status, 200);
    assert.ok(single.headers[STALE_HEADER.toLowerCase()] !== undefined);
    // A question never asked before cannot be answered without the apiserver.
    const undecidable = await httpGet(`${server.nodesUrl}/${PREFIX}-0004`, admin);
    assert.equal(undecidable.status, 503);
    assert.equal(
      undecidable.json<{ message: string }>().message,
      'authorization check is temporarily unavailable',
    );

    const metrics = await server.registry.metrics();
    assert.match(metrics, /platform_cache_watch_connected\{kind="nodes"\} 0/);
    const staleSeconds = Number(/platform_cache_stale_seconds\{kind="nodes"\} (\d+)/.exec(metrics)?.[1]);
    assert.ok(staleSeconds >= 2, `stale seconds metric: ${staleSeconds}`);
    // The allowed answer (TTL 1 s) expired during the outage; the last answer is used meanwhile.
    assert.match(
      metrics,
      /platform_authz_checks_total\{verb="list",resource="nodes",decision="allowed",source="stale"\} [1-9]/,
    );

    // The apiserver comes back; changes are made while our server still cannot reach it.
    await cp.startApiserver();
    await core.createNode({ body: nodeFixture(100, { prefix: PREFIX }) });
    await core.deleteNode({ name: `${PREFIX}-0001` });
    await core.patchNode({
      name: `${PREFIX}-0002`,
      body: [{ op: 'add', path: '/spec/unschedulable', value: true }],
    });
    await core.patchNode({
      name: `${PREFIX}-0003`,
      body: [{ op: 'add', path: '/metadata/labels/nout.test~1relabelled', value: 'yes' }],
    });
    const meanwhile = await get();
    assert.deepEqual(
      meanwhile.json<ListBody>(),
      cachedBody,
      'changes are not visible through the closed gate',
    );

    gate.open();
    const expected = await directVersions();
    assert.equal(Object.keys(expected).length, 12);
    const caughtUp = await waitFor(
      'caught up with the apiserver',
      async () => {
        const res = await get();
        return res.status === 200 && isDeepStrictEqual(servedVersions(res.json<ListBody>()), expected)
          ? res
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    const body = caughtUp.json<ListBody>();
    assert.ok(body.items.some((n) => n.metadata!.name === `${PREFIX}-0100`));
    assert.ok(!body.items.some((n) => n.metadata!.name === `${PREFIX}-0001`));
    assert.equal(
      (await get('&status=unschedulable'))
        .json<ListBody>()
        .items.some((n) => n.metadata!.name === `${PREFIX}-0002`),
      true,
    );
    assert.equal((await get('&labelSelector=nout.test/relabelled=yes')).json<ListBody>().totalItems, 1);
    await waitFor('staleness header gone', async () =>
      (await get()).headers[STALE_HEADER.toLowerCase()] === undefined ? true : undefined,
    );
  });
});
