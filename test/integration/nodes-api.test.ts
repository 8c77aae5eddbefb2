import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../../src/cluster/kube-request.ts';
import type { RawNode } from '../../src/nodes/node-view.ts';
import type { ControlPlane } from '../cluster/control-plane.ts';
import { nodeFixture } from '../cluster/node-fixtures.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { httpGet, type RawResponse } from '../support/http-client.ts';
import { serverKubeConfig, startNodesServer, type NodesServer } from '../support/nodes-server.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const PREFIX = 'napi';
const INITIAL = 30;
const LATER = 10;

interface ListBody {
  items: RawNode[];
  totalItems: number;
}

interface StatusBody {
  kind: string;
  code: number;
  reason: string;
  message: string;
  details?: { name?: string; kind?: string; causes?: { field?: string }[] };
}

/** Fixture nodes plus a numeric label, so `>`/`<` selectors have something to compare. */
async function createFixtureNodes(core: CoreV1Api, from: number, count: number): Promise<void> {
  const indexes = Array.from({ length: count }, (_, i) => from + i);
  const worker = async () => {
    for (let i = indexes.shift(); i !== undefined; i = indexes.shift()) {
      const node = nodeFixture(i, { prefix: PREFIX });
      node.metadata!.labels!['napi.test/rank'] = String(i);
      await core.createNode({ body: node });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** The fixture's own rules (see node-fixtures.ts), independent of the server's status code. */
function fixtureStatus(index: number): string {
  if (index % 7 === 6) return 'unschedulable';
  if (index % 11 === 10 || index % 13 === 12) return 'warning';
  return 'running';
}

const indexOf = (name: string) => Number(name.slice(PREFIX.length + 1));

// At module level: when this file runs alone, the private control plane's after() hook belongs to the
// whole file, not to a before() hook.
const cp: ControlPlane = await testControlPlane();

describe('node list API against the real kube-apiserver', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  let rbac: RbacAuthorizationV1Api;
  let server: NodesServer;
  let adminAuth: Record<string, string>;

  const get = (query = '', headers: Record<string, string> = adminAuth): Promise<RawResponse> =>
    httpGet(`${server.nodesUrl}${query}`, headers);
  const list = async (query: string, headers = adminAuth): Promise<ListBody> => {
    const res = await get(`?${query}`, headers);
    assert.equal(res.status, 200, `${query}: ${res.body.toString()}`);
    return res.json<ListBody>();
  };
  const names = (body: ListBody) => body.items.map((n) => n.metadata!.name!);

  /** Our nodes as the kube-apiserver lists them right now, optionally with a server-side selector. */
  const direct = async (labelSelector?: string): Promise<RawNode[]> => {
    const query = labelSelector === undefined ? '' : `?labelSelector=${encodeURIComponent(labelSelector)}`;
    const listed = await kubeRequest<{ items: RawNode[] }>(kc, `/api/v1/nodes${query}`, {
      timeoutMs: 30_000,
    });
    return listed.items.filter((n) => n.metadata!.name!.startsWith(`${PREFIX}-`));
  };

  before(async () => {
    kc = serverKubeConfig(cp.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
    rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    adminAuth = { Authorization: `Bearer ${cp.admin.token}` };
    await createFixtureNodes(core, 0, INITIAL);
    server = await startNodesServer({ kubeconfigPath: cp.kubeconfigPath });
    await server.cache.waitForSynced(15_000);
    await createFixtureNodes(core, INITIAL, LATER);
    await waitFor('later nodes arrive through the watch', async () => {
      const body = await list(`name=${PREFIX}-`);
      return body.totalItems === INITIAL + LATER ? true : undefined;
    });
  });

  after(async () => {
    await server?.stop();
    const nodes = await direct();
    await Promise.all(nodes.map((n) => core.deleteNode({ name: n.metadata!.name! })));
    for (const name of [`${PREFIX}-bob-viewer`, `${PREFIX}-developers-lister`]) {
      await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    }
    for (const name of [`${PREFIX}-node-viewer`, `${PREFIX}-node-lister`]) {
      await rbac.deleteClusterRole({ name }).catch(() => undefined);
    }
  });

  test('items are full Nodes as the kube-apiserver has them, with selfLink and without managedFields', async () => {
    const body = await list(`name=${PREFIX}-0003`);
    assert.equal(body.totalItems, 1);
    const served = body.items[0]!;
    const stored = (await direct()).find((n) => n.metadata!.name === `${PREFIX}-0003`)!;
    assert.ok(Array.isArray(stored.metadata!.managedFields), 'the apiserver does send managedFields');

    const { managedFields: _m, ...metadata } = stored.metadata!;
    const expected: RawNode = {
      ...stored,
      kind: 'Node',
      apiVersion: 'v1',
      metadata: {
        ...metadata,
        selfLink: `/api/v1/nodes/${PREFIX}-0003`,
        // No pods on fixture nodes: the allocation annotations are all zero (node-allocation.test.ts).
        annotations: {
          ...metadata.annotations,
          'node.platform.io/cpu-requests': '0',
          'node.platform.io/cpu-limits': '0',
          'node.platform.io/memory-requests': '0',
          'node.platform.io/memory-limits': '0',
          'node.platform.io/cpu-requests-fraction': '0%',
          'node.platform.io/cpu-limits-fraction': '0%',
          'node.platform.io/memory-requests-fraction': '0%',
          'node.platform.io/memory-limits-fraction': '0%',
        },
      },
    };
    assert.deepEqual(served, expected);

    assert.deepEqual(Object.keys(served).slice(0, 3), ['kind', 'apiVersion', 'metadata']);
    assert.deepEqual(Object.keys(served.metadata!).slice(0, 2), ['name', 'selfLink']);
    assert.match(served.metadata!.uid!, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.match(served.metadata!.resourceVersion!, /^\d+$/);
    assert.match(served.metadata!.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(served.metadata!.labels!['node-role.kubernetes.io/worker'], '', 'empty label values kept');
    const jsonText = served.metadata!.annotations!['platform.io/labels']!;
    assert.equal(
      jsonText,
      JSON.stringify({ zone: 'zone-a', pool: 'batch' }),
      'JSON-text annotations verbatim',
    );
    assert.equal(served['status'] && typeof served['status'], 'object');
  });

  test('a single node by name, and 404 Status for an unknown one', async () => {
    const res = await httpGet(`${server.nodesUrl}/${PREFIX}-0004`, adminAuth);
    assert.equal(res.status, 200);
    const node = res.json<RawNode>();
    assert.equal(node.metadata!.name, `${PREFIX}-0004`);
    assert.equal(node.metadata!['selfLink'], `/api/v1/nodes/${PREFIX}-0004`);
    assert.ok(res.headers.etag!.startsWith(`W/"${node.metadata!.resourceVersion}.`), res.headers.etag);

    const missing = await httpGet(`${server.nodesUrl}/${PREFIX}-nope`, adminAuth);
    assert.equal(missing.status, 404);
    const status = missing.json<StatusBody>();
    assert.equal(status.kind, 'Status');
    assert.equal(status.reason, 'NotFound');
    assert.equal(status.message, `nodes "${PREFIX}-nope" not found`);
    assert.deepEqual(status.details, { name: `${PREFIX}-nope`, kind: 'nodes' });
  });

  test('every combination of sort, direction and page size matches an independent sort of a direct LIST', async () => {
    const all = await direct();
    assert.equal(all.length, INITIAL + LATER);
    const ordered = (sortBy: string, ascending: boolean) => {
      const byName = (a: RawNode, b: RawNode) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1);
      const sorted = [...all].sort((a, b) => {
        if (sortBy === 'name') return byName(a, b);
        const ta = Date.parse(a.metadata!.creationTimestamp!);
        const tb = Date.parse(b.metadata!.creationTimestamp!);
        return ta - tb || byName(a, b);
      });
      return (ascending ? sorted : sorted.reverse()).map((n) => n.metadata!.name!);
    };
    // Nodes were created in bursts, so many share a creation second: ties must be broken by name.
    const seconds = new Set(all.map((n) => n.metadata!.creationTimestamp));
    assert.ok(seconds.size < all.length, 'some creation timestamps are shared');

    for (const sortBy of [undefined, 'name', 'creationTimestamp', 'createTime']) {
      for (const ascending of [undefined, 'true', 'false']) {
        const expected = ordered(sortBy ?? 'creationTimestamp', ascending === 'true');
        const base = [`name=${PREFIX}-`];
        if (sortBy) base.push(`sortBy=${sortBy}`);
        if (ascending) base.push(`ascending=${ascending}`);
        const label = base.join('&');

        const whole = await list(label);
        assert.deepEqual(names(whole), expected, label);
        assert.equal(whole.totalItems, expected.length);
        assert.deepEqual(names(await list(`${label}&limit=-1`)), expected, `${label}&limit=-1`);

        const pages: string[] = [];
        for (let page = 1; page <= 6; page++) {
          const body = await list(`${label}&limit=7&page=${page}`);
          assert.equal(body.totalItems, expected.length, `${label} page ${page}`);
          assert.deepEqual(names(body), expected.slice((page - 1) * 7, page * 7), `${label} page ${page}`);
          pages.push(...names(body));
        }
        assert.deepEqual(pages, expected, `${label}: pages tile the list`);
      }
    }
  });

  test('paging edges', async () => {
    const total = INITIAL + LATER;
    const pastEnd = await list(`name=${PREFIX}-&limit=10&page=5`);
    assert.deepEqual(pastEnd, { items: [], totalItems: total });
    assert.equal((await list(`name=${PREFIX}-&limit=10&page=4`)).items.length, 10);
    assert.equal((await list(`name=${PREFIX}-&limit=${total}`)).items.length, total);
    assert.equal((await list(`name=${PREFIX}-&limit=1000`)).items.length, total);
    const last = await list(`name=${PREFIX}-&limit=1&page=${total}&sortBy=name&ascending=true`);
    assert.deepEqual(names(last), [`${PREFIX}-${String(total - 1).padStart(4, '0')}`]);
    assert.equal(
      (await list(`name=${PREFIX}-&page=3`)).items.length,
      total,
      'page without limit: everything',
    );
    assert.deepEqual(await list(`name=${PREFIX}-nothing&limit=5&page=2`), { items: [], totalItems: 0 });
  });

  test('name and status filters, alone and combined with selectors and paging', async () => {
    const all = (await direct()).map((n) => n.metadata!.name!).sort();
    const byStatus = (status: string) => all.filter((n) => fixtureStatus(indexOf(n)) === status);
    for (const status of ['running', 'warning', 'unschedulable']) {
      const body = await list(`name=${PREFIX}-&status=${status}&sortBy=name&ascending=true`);
      assert.deepEqual(names(body), byStatus(status), status);
      assert.ok(body.totalItems > 0, `${status}: fixtures cover every status`);
    }
    assert.deepEqual(
      names(await list(`name=${PREFIX}-002&sortBy=name&ascending=true`)),
      all.filter((n) => n.includes(`${PREFIX}-002`)),
    );
    const workers = new Set((await direct('node-role.kubernetes.io/worker')).map((n) => n.metadata!.name!));
    const expected = byStatus('running').filter((n) => workers.has(n));
    const combined = await list(
      `name=${PREFIX}-&status=running&labelSelector=node-role.kubernetes.io/worker&sortBy=name&limit=4&page=2`,
    );
    assert.equal(combined.totalItems, expected.length);
    assert.deepEqual(names(combined), [...expected].reverse().slice(4, 8));
  });

  test('label selectors select exactly what the kube-apiserver selects', async () => {
    const selectors = [
      '',
      'node-role.kubernetes.io/worker',
      '!node-role.kubernetes.io/worker',
      'node-role.kubernetes.io/control-plane=',
      'node-role.kubernetes.io/worker in ()',
      'topology.kubernetes.io/zone=zone-a',
      'topology.kubernetes.io/zone==zone-b',
      'topology.kubernetes.io/zone!=zone-a',
      'topology.kubernetes.io/zone in (zone-a, zone-c)',
      'topology.kubernetes.io/zone notin (zone-a)',
      'kubernetes.io/arch=arm64,node.platform.io/pool=batch',
      'node.platform.io/pool in (general),!node-role.kubernetes.io/edge',
      'napi.test/rank>20',
      'napi.test/rank<5,kubernetes.io/arch',
      'no-such-label',
      '!no-such-label',
      'no-such-label!=x',
      'no-such-label notin (x)',
    ];
    for (const selector of selectors) {
      const expected = (await direct(selector)).map((n) => n.metadata!.name!).sort();
      const body = await list(
        `name=${PREFIX}-&sortBy=name&ascending=true&labelSelector=${encodeURIComponent(selector)}`,
      );
      assert.deepEqual(names(body), expected, selector);
    }
  });

  test('malformed parameters are 400 Status naming the parameter; bad selectors are bad for the apiserver too', async () => {
    const cases: [string, string][] = [
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=x', 'page'],
      ['limit=abc', 'limit'],
      ['limit=0', 'limit'],
      ['limit=2.5', 'limit'],
      ['sortBy=age', 'sortBy'],
      ['ascending=yes', 'ascending'],
      ['status=ready', 'status'],
      ['limit=1&limit=2', 'limit'],
      ['sortBy=lastUpdate', 'sortBy'],
      [`label=${encodeURIComponent('a in b')}`, 'label'],
      [`annotation=${encodeURIComponent('a,')}`, 'annotation'],
      [`annotation=${encodeURIComponent('Foo.com/x')}`, 'annotation'],
      ['names=a&names=b', 'names'],
      ['uid=a&uid=b', 'uid'],
      ['alias=a&alias=b', 'alias'],
    ];
    const badSelectors = ['a in b', 'a=b=c', '!', 'a,', 'a>b', 'Foo.com/x', 'a in (b', 'a b'];
    for (const selector of badSelectors) {
      cases.push([`labelSelector=${encodeURIComponent(selector)}`, 'labelSelector']);
      await assert.rejects(
        direct(selector),
        (err: unknown) => err instanceof KubeRequestError && err.statusCode === 400,
        `the kube-apiserver rejects ${selector} too`,
      );
    }
    for (const [query, parameter] of cases) {
      const res = await get(`?${query}`);
      assert.equal(res.status, 400, query);
      const status = res.json<StatusBody>();
      assert.equal(status.kind, 'Status');
      assert.equal(status.reason, 'BadRequest');
      assert.equal(status.code, 400);
      assert.ok(status.message.includes(`"${parameter}"`), `${query}: ${status.message}`);
      assert.equal(status.details?.causes?.[0]?.field, parameter, query);
    }
    const ignored = await list(`name=${PREFIX}-&fieldSelector=x&role=master&foo=bar`);
    assert.equal(ignored.totalItems, INITIAL + LATER, 'unknown parameters are ignored');
  });

  test('names, uid, label, annotation and alias filters and lastUpdateTimestamp order match an independent computation', async () => {
    // Aliases on a few nodes (as the console's "edit information" dialog sets them).
    const aliases: Record<number, string> = {
      1: 'Rack A-1',
      4: 'rack a-4',
      9: 'Rack A-9',
      16: 'Rack B-16',
      25: 'Rack A-25',
    };
    for (const [i, alias] of Object.entries(aliases)) {
      await core.patchNode({
        name: `${PREFIX}-${String(i).padStart(4, '0')}`,
        body: [{ op: 'add', path: '/metadata/annotations/platform.io~1alias-name', value: alias }],
      });
    }
    await waitFor('aliases in the cache', async () =>
      (await list(`name=${PREFIX}-&annotation=platform.io/alias-name`)).totalItems === 5 ? true : undefined,
    );
    const all = await direct();
    const byName = [...all].sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : 1));
    const sortedNames = (nodes: RawNode[]) => nodes.map((n) => n.metadata!.name!).sort();
    const ascending = `name=${PREFIX}-&sortBy=name&ascending=true`;

    const wanted = [byName[3]!, byName[17]!, byName[30]!].map((n) => n.metadata!.name!);
    assert.deepEqual(
      names(await list(`${ascending}&names=${[...wanted, 'nope'].join(',')}`)),
      [...wanted].sort(),
    );
    assert.deepEqual(names(await list(`names=${wanted[1]}`)), [wanted[1]], 'names alone');

    const target = byName[12]!;
    assert.deepEqual(names(await list(`uid=${target.metadata!.uid}`)), [target.metadata!.name]);
    assert.equal((await list(`uid=${target.metadata!.uid!.slice(0, 8)}`)).totalItems, 0, 'uid is exact');

    for (const selector of [
      'node-role.kubernetes.io/worker',
      'topology.kubernetes.io/zone in (zone-b)',
      'napi.test/rank<7',
    ]) {
      const body = await list(`${ascending}&label=${encodeURIComponent(selector)}`);
      assert.deepEqual(names(body), sortedNames(await direct(selector)), `label=${selector}`);
    }
    const annotated = (predicate: (a: Record<string, string>) => boolean) =>
      sortedNames(all.filter((n) => predicate(n.metadata!.annotations ?? {})));
    assert.deepEqual(
      names(await list(`${ascending}&annotation=${encodeURIComponent('platform.io/alias-name')}`)),
      annotated((a) => 'platform.io/alias-name' in a),
    );
    assert.deepEqual(
      names(
        await list(
          `${ascending}&annotation=${encodeURIComponent('node.alpha.kubernetes.io/ttl=0,!platform.io/alias-name')}`,
        ),
      ),
      annotated((a) => a['node.alpha.kubernetes.io/ttl'] === '0' && !('platform.io/alias-name' in a)),
    );
    assert.deepEqual(
      names(await list(`${ascending}&alias=${encodeURIComponent('Rack A')}`)),
      annotated((a) => (a['platform.io/alias-name'] ?? '').includes('Rack A')),
    );
    assert.equal((await list(`${ascending}&alias=Rack%20A`)).totalItems, 3, 'case-sensitive substring');

    // Combined with each other, with paging and with a descending sort.
    const workersWithAlias = sortedNames(
      (await direct('node-role.kubernetes.io/worker')).filter(
        (n) => 'platform.io/alias-name' in (n.metadata!.annotations ?? {}),
      ),
    );
    const combined = await list(
      `name=${PREFIX}-&label=node-role.kubernetes.io/worker&alias=ack&sortBy=name&limit=2&page=1`,
    );
    assert.equal(combined.totalItems, workersWithAlias.length);
    assert.deepEqual(names(combined), [...workersWithAlias].reverse().slice(0, 2));

    // lastUpdateTimestamp: the latest condition transition (fixture conditions all have one).
    const updated = (n: RawNode) =>
      Math.max(...(n.status?.conditions ?? []).map((c) => Date.parse(c.lastTransitionTime!)));
    const byUpdate = [...all]
      .sort((a, b) => updated(a) - updated(b) || (a.metadata!.name! < b.metadata!.name! ? -1 : 1))
      .map((n) => n.metadata!.name!);
    for (const sortBy of ['lastUpdateTimestamp', 'updateTime']) {
      assert.deepEqual(
        names(await list(`name=${PREFIX}-&sortBy=${sortBy}&ascending=true`)),
        byUpdate,
        sortBy,
      );
      const pages: string[] = [];
      for (let page = 1; page <= 4; page++)
        pages.push(...names(await list(`name=${PREFIX}-&sortBy=${sortBy}&limit=11&page=${page}`)));
      assert.deepEqual(pages, [...byUpdate].reverse(), `${sortBy}, descending pages`);
    }
  });

  test('creates, relabels, cordons and deletes show in the list within a second', async () => {
    const name = `${PREFIX}-0100`;
    const within = (what: string, check: () => Promise<boolean>) =>
      waitFor(what, async () => ((await check()) ? true : undefined), { timeoutMs: 1000, intervalMs: 20 });
    const one = async (query: string) => (await list(`name=${name}&${query}`)).items;

    await core.createNode({ body: nodeFixture(100, { prefix: PREFIX }) });
    await within('created node listed', async () => (await one('')).length === 1);

    await core.patchNode({
      name,
      body: [{ op: 'add', path: '/metadata/labels/napi.test~1relabelled', value: 'yes' }],
    });
    await within(
      'relabelled node selected',
      async () => (await one('labelSelector=napi.test/relabelled=yes')).length === 1,
    );

    assert.equal((await one('status=unschedulable')).length, 0);
    await core.patchNode({ name, body: [{ op: 'add', path: '/spec/unschedulable', value: true }] });
    await within('cordoned node unschedulable', async () => (await one('status=unschedulable')).length === 1);

    await core.deleteNode({ name });
    await within('deleted node gone', async () => (await one('')).length === 0);
    const get404 = await httpGet(`${server.nodesUrl}/${name}`, adminAuth);
    assert.equal(get404.status, 404);
  });

  test('ETag: 304 while nothing changed, a fresh body after a change', async () => {
    const query = `?name=${PREFIX}-&sortBy=name&ascending=true&limit=5`;
    const first = await get(query);
    assert.equal(first.status, 200);
    const etag = first.headers.etag!;
    assert.match(etag, /^W\/".+"$/);
    assert.equal(first.headers['cache-control'], 'private, no-cache');

    const again = await get(query, { ...adminAuth, 'If-None-Match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers.etag, etag);

    const otherQuery = await get(`${query}&page=2`, { ...adminAuth, 'If-None-Match': etag });
    assert.equal(otherQuery.status, 200, 'the ETag belongs to the query');

    await core.patchNode({
      name: `${PREFIX}-0001`,
      body: [{ op: 'add', path: '/metadata/labels/napi.test~1etag', value: 'changed' }],
    });
    const fresh = await waitFor('a fresh body after the change', async () => {
      const res = await get(query, { ...adminAuth, 'If-None-Match': etag });
      return res.status === 200 ? res : undefined;
    });
    assert.notEqual(fresh.headers.etag, etag);
    const changed = fresh.json<ListBody>().items.find((n) => n.metadata!.name === `${PREFIX}-0001`);
    assert.equal(changed?.metadata?.labels?.['napi.test/etag'], 'changed');

    const single = await httpGet(`${server.nodesUrl}/${PREFIX}-0001`, adminAuth);
    const singleAgain = await httpGet(`${server.nodesUrl}/${PREFIX}-0001`, {
      ...adminAuth,
      'If-None-Match': single.headers.etag!,
    });
    assert.equal(singleAgain.status, 304);
  });

  test('gzip for large bodies when the client accepts it', async () => {
    const query = `?name=${PREFIX}-&sortBy=name`;
    const plain = await get(query);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(plain.body.length > 8192);
    const zipped = await get(query, { ...adminAuth, 'Accept-Encoding': 'gzip, deflate' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.vary, 'Accept-Encoding');
    assert.ok(zipped.body.length < plain.body.length / 4);
    assert.deepEqual(gunzipSync(zipped.body), plain.body);
    assert.equal(zipped.headers.etag, plain.headers.etag);

    const refused = await get(query, { ...adminAuth, 'Accept-Encoding': 'gzip;q=0, identity' });
    assert.equal(refused.headers['content-encoding'], undefined);
    const small = await get(`${query}&limit=1`, { ...adminAuth, 'Accept-Encoding': 'gzip' });
    assert.equal(small.headers['content-encoding'], undefined, 'small bodies are not worth compressing');
  });

  test('RBAC decides: 403 without a binding, 200 after a ClusterRoleBinding; get and list are separate verbs', async () => {
    const bob = { Authorization: `Bearer ${cp.users.bob.token}` };
    const alice = { Authorization: `Bearer ${cp.users.alice.token}` };
    const denied = await get(`?name=${PREFIX}-`, bob);
    assert.equal(denied.status, 403);
    const status = denied.json<StatusBody>();
    assert.equal(status.reason, 'Forbidden');
    assert.equal(
      status.message,
      'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope',
    );
    assert.equal((await httpGet(`${server.nodesUrl}/${PREFIX}-0001`, bob)).status, 403);

    await rbac.createClusterRole({
      body: {
        metadata: { name: `${PREFIX}-node-viewer` },
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: `${PREFIX}-bob-viewer` },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: `${PREFIX}-node-viewer`,
        },
        subjects: [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    const allowed = await waitFor('bob allowed after the binding', async () => {
      const res = await get(`?name=${PREFIX}-&limit=2`, bob);
      return res.status === 200 ? res : undefined;
    });
    assert.equal(allowed.json<ListBody>().totalItems, INITIAL + LATER);
    // The earlier denial of get is cached briefly too (deniedTtlMs).
    await waitFor('bob may get a node', async () =>
      (await httpGet(`${server.nodesUrl}/${PREFIX}-0001`, bob)).status === 200 ? true : undefined,
    );

    // A group binding that grants list but not get.
    await rbac.createClusterRole({
      body: {
        metadata: { name: `${PREFIX}-node-lister` },
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: `${PREFIX}-developers-lister` },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: `${PREFIX}-node-lister`,
        },
        subjects: [{ kind: 'Group', name: 'developers', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    await waitFor('alice (group developers) may list', async () =>
      (await get(`?name=${PREFIX}-&limit=1`, alice)).status === 200 ? true : undefined,
    );
    const aliceGet = await httpGet(`${server.nodesUrl}/${PREFIX}-0001`, alice);
    assert.equal(aliceGet.status, 403);
    assert.match(
      aliceGet.json<StatusBody>().message,
      /nodes "napi-0001" is forbidden: User "alice" cannot get/,
    );

    const metrics = await server.registry.getSingleMetricAsString('platform_authz_checks_total');
    assert.match(metrics, /decision="denied",source="apiserver"/);
    assert.match(metrics, /decision="allowed",source="cache"/);
  });
});
