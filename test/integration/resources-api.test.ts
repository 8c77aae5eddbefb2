import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

/**
 * The generic v1alpha3 resources API and the overview cards, on the real kube-apiserver, asked exactly
 * as the original's console asks (platform name `kubesphere`, its query strings byte for byte).
 */
const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const PLATFORM = 'kubesphere';
// Namespaces cannot finish deleting here (no controller-manager): every run uses names of its own.
const RUN = `rsapi-${randomBytes(3).toString('hex')}`;
const NS_A = `${RUN}-a`;
const NS_B = `${RUN}-b`;
const NS_DEVOPS = `${RUN}-devops`;
const NODE = `${RUN}-node`;
const ADMIN = { name: `${RUN}-admin`, password: 'Admin-Pa55word!', groups: [`${RUN}-admins`] };
const NOBODY = { name: `${RUN}-nobody`, password: 'Nobody-Pa55word!', groups: [`${RUN}-nobodies`] };
const BASE = `/kapis/resources.${PLATFORM}.io/v1alpha3`;
// Storage: a namespace of its own (its claims would count in NS_A's overview cards), two classes, a CSI driver.
const NS_PVC = `${RUN}-pvc`;
const SC_FAST = `${RUN}-fast`;
const SC_SLOW = `${RUN}-slow`;
const DRIVER = `csi.${RUN}.example.com`;
const SNAPSHOT_CLASSES = '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses';
const SNAPSHOT_CRD =
  '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/volumesnapshotclasses.snapshot.storage.k8s.io';

/**
 * A stand-in for the CSI snapshot API's VolumeSnapshotClass CRD, written for these tests: it types only
 * what the server reads (`driver`). Its group is a protected one, hence the approval annotation.
 */
const VOLUME_SNAPSHOT_CLASS_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: {
    name: 'volumesnapshotclasses.snapshot.storage.k8s.io',
    annotations: { 'api-approved.kubernetes.io': 'unapproved, a test stand-in' },
  },
  spec: {
    group: 'snapshot.storage.k8s.io',
    scope: 'Cluster',
    names: {
      kind: 'VolumeSnapshotClass',
      listKind: 'VolumeSnapshotClassList',
      plural: 'volumesnapshotclasses',
      singular: 'volumesnapshotclass',
    },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            required: ['driver', 'deletionPolicy'],
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
              driver: { type: 'string' },
              deletionPolicy: { type: 'string', enum: ['Delete', 'Retain'] },
            },
          },
        },
      },
    ],
  },
};

function claim(name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, annotations },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  };
}

const admin = { timeoutMs: 10_000 };
const post = (path: string, body: unknown) => kubeRequest(kc, path, { ...admin, method: 'POST', body });
const del = (path: string) => kubeRequest(kc, path, { ...admin, method: 'DELETE' }).catch(() => undefined);

function pod(name: string, labels: Record<string, string>, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { nodeName: NODE, containers: [{ name: 'c', image: 'example.com/app:1' }], ...extra },
  };
}

/** status.startTime through the status subresource (the kube-apiserver resets status on create). */
async function setStartTime(namespace: string, name: string, startTime: string) {
  await kubeRequest(kc, `/api/v1/namespaces/${namespace}/pods/${name}/status`, {
    ...admin,
    method: 'PATCH',
    contentType: 'application/merge-patch+json',
    body: { status: { startTime, phase: 'Running' } },
  });
}

interface ListBody {
  items: { kind: string; apiVersion: string; metadata: Record<string, unknown> }[];
  totalItems: number;
}

describe('resources API v1alpha3 and the overview cards', () => {
  let server: ServerProcess;
  let adminToken = '';
  let nobodyToken = '';

  const get = (path: string, token: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}`, ...headers } });
  const json = async <T = ListBody>(path: string, token = adminToken): Promise<T> => {
    const res = await get(path, token);
    const body = await res.text();
    assert.equal(res.status, 200, `${path}: ${body}`);
    return JSON.parse(body) as T;
  };
  const names = (body: ListBody) => body.items.map((i) => i.metadata['name']);

  before(async () => {
    await installIamCrds(kc, PLATFORM);
    await createUser(kc, ADMIN, PLATFORM);
    await createUser(kc, NOBODY, PLATFORM);
    await post('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: `${RUN}-admins` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'Group', name: ADMIN.groups[0], apiGroup: 'rbac.authorization.k8s.io' }],
    });
    for (const ns of [NS_A, NS_B]) await post('/api/v1/namespaces', { metadata: { name: ns } });
    await post('/api/v1/namespaces', {
      metadata: { name: NS_DEVOPS, labels: { 'kubesphere.io/devopsproject': NS_DEVOPS } },
    });
    // Three pods on one node, created in order web-1, web-2, db-1; started in the opposite order.
    await post(`/api/v1/namespaces/${NS_A}/pods`, pod('web-1', { app: 'web' }));
    await post(`/api/v1/namespaces/${NS_A}/pods`, pod('web-2', { app: 'web' }));
    await post(
      `/api/v1/namespaces/${NS_A}/pods`,
      pod(
        'db-1',
        { app: 'db' },
        { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] },
      ),
    );
    await setStartTime(NS_A, 'web-1', '2030-01-01T00:00:03Z');
    await setStartTime(NS_A, 'web-2', '2030-01-01T00:00:02Z');
    await setStartTime(NS_A, 'db-1', '2030-01-01T00:00:01Z');
    await post(`/api/v1/namespaces/${NS_B}/pods`, pod('web-1', { app: 'web' }));
    await post(`/api/v1/namespaces/${NS_A}/services`, {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
    });
    await post(`/api/v1/namespaces/${NS_A}/secrets`, {
      metadata: { name: 'token' },
      stringData: { key: 'v' },
    });
    // Desired 2, none ready (no controller runs here): not ready.
    await post(`/apis/apps/v1/namespaces/${NS_A}/deployments`, {
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'example.com/app:1' }] },
        },
      },
    });
    await post(`/api/v1/namespaces/${NS_A}/resourcequotas`, {
      metadata: { name: 'limits' },
      spec: { hard: { pods: '10', 'requests.memory': '2Gi' } },
    });
    await kubeRequest(kc, `/api/v1/namespaces/${NS_A}/resourcequotas/limits/status`, {
      ...admin,
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: {
        status: {
          hard: { pods: '10', 'requests.memory': '2Gi' },
          used: { pods: '3', 'requests.memory': '512Mi' },
        },
      },
    });

    // The snapshot API is found at start: it must be served before the server starts.
    await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', VOLUME_SNAPSHOT_CLASS_CRD);
    await waitFor('the VolumeSnapshotClass API served', () => kubeRequest(kc, SNAPSHOT_CLASSES, admin), {
      timeoutMs: 30_000,
    });

    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${PLATFORM}`,
    ]);
    const client = { id: PLATFORM, secret: PLATFORM };
    const token = async (user: typeof ADMIN) => {
      const login = await passwordLogin(server.url, user.name, user.password, client);
      assert.equal(login.status, 200, JSON.stringify(login.body));
      return String(login.body['access_token']);
    };
    adminToken = await token(ADMIN);
    nobodyToken = await token(NOBODY);
  });

  after(async () => {
    await server?.stop();
    await deleteUsersAndSessions(kc, [ADMIN.name, NOBODY.name], PLATFORM);
    await del(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${RUN}-admins`);
    for (const ns of [NS_A, NS_B, NS_DEVOPS]) await del(`/api/v1/namespaces/${ns}`);
    // Gone before the next test file's server starts, whose discovery would otherwise still find it.
    await del(SNAPSHOT_CRD);
    await waitFor(
      'the VolumeSnapshotClass CRD deleted',
      () =>
        kubeRequest(kc, SNAPSHOT_CRD, admin).then(
          () => undefined,
          () => true,
        ),
      { timeoutMs: 30_000 },
    );
  });

  test("the console's project list (N3): namespaces without the devops label, newest first, 10 a page", async () => {
    const path = `${BASE}/namespaces?labelSelector=%21kubesphere.io%2Fdevopsproject&sortBy=createTime&limit=10`;
    const body = await waitFor('the namespace cache holds this run’s namespaces', async () => {
      const b = await json(`${BASE}/namespaces?name=${RUN}-&labelSelector=%21kubesphere.io%2Fdevopsproject`);
      return b.totalItems === 2 ? b : undefined;
    });
    assert.deepEqual(names(body).sort(), [NS_A, NS_B]);
    const page = await json(path);
    assert.ok(page.items.length <= 10);
    assert.ok(!names(page).includes(NS_DEVOPS));
    assert.equal(page.items[0]!.kind, 'Namespace');
    assert.equal(page.items[0]!.apiVersion, 'v1');
    const created = page.items.map((i) => Date.parse(String(i.metadata['creationTimestamp'])));
    assert.deepEqual(
      created,
      [...created].sort((a, b) => b - a),
      'newest first',
    );
    const all = await json(`${BASE}/namespaces?labelSelector=%21kubesphere.io%2Fdevopsproject`);
    assert.equal(page.totalItems, all.totalItems);

    const first = await get(path, adminToken);
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^W\//);
    assert.equal((await get(path, adminToken, { 'If-None-Match': etag })).status, 304);

    const one = await json<{ kind: string; metadata: Record<string, unknown> }>(`${BASE}/namespaces/${NS_A}`);
    assert.equal(one.kind, 'Namespace');
    assert.equal(one.metadata['managedFields'], undefined);
  });

  test("a node's pods as the node page asks (D3): limit 6, by node, by start time", async () => {
    const body = await json(`${BASE}/pods?limit=6&nodeName=${NODE}&sortBy=startTime`);
    assert.equal(body.totalItems, 4);
    // Latest start first; the pod of NS_B never started, so its creation time (now, before 2030) counts.
    assert.deepEqual(
      body.items.map((i) => `${i.metadata['namespace']}/${i.metadata['name']}`),
      [`${NS_A}/web-1`, `${NS_A}/web-2`, `${NS_A}/db-1`, `${NS_B}/web-1`],
    );
    assert.equal(body.items[0]!.kind, 'Pod');
    assert.ok(body.items.every((i) => i.metadata['managedFields'] === undefined));
    const ascending = await json(`${BASE}/pods?limit=2&nodeName=${NODE}&sortBy=startTime&ascending=true`);
    assert.deepEqual(
      ascending.items.map((i) => `${i.metadata['namespace']}/${i.metadata['name']}`),
      [`${NS_B}/web-1`, `${NS_A}/db-1`],
    );
    assert.equal(ascending.totalItems, 4);
  });

  test('a namespaced pod page, its filters and selectors', async () => {
    const pods = `${BASE}/namespaces/${NS_A}/pods`;
    const page = await json(`${pods}?limit=2&page=2&sortBy=name&ascending=true`);
    assert.deepEqual(names(page), ['web-2']);
    assert.equal(page.totalItems, 3);
    assert.deepEqual(names(await json(`${pods}?labelSelector=app%21%3Dweb`)), ['db-1']);
    assert.deepEqual(names(await json(`${pods}?labelSelector=%21app`)), []);
    assert.deepEqual(names(await json(`${pods}?pvcName=data`)), ['db-1']);
    assert.deepEqual(names(await json(`${pods}?serviceName=web&sortBy=name&ascending=true`)), [
      'web-1',
      'web-2',
    ]);
    assert.deepEqual(names(await json(`${pods}?serviceName=nothing`)), []);
    assert.deepEqual(names(await json(`${pods}?name=web&names=web-2,db-1`)), ['web-2']);
    assert.deepEqual(names(await json(`${BASE}/pods?namespace=${NS_B}`)), ['web-1']);
    const one = await json<{ kind: string; metadata: { name: string } }>(`${pods}/db-1`);
    assert.equal(one.kind, 'Pod');
    assert.equal(one.metadata.name, 'db-1');

    const res = await get(`${pods}?sortBy=name`, adminToken);
    assert.equal(res.status, 200);
    assert.equal(
      (await get(`${pods}?sortBy=name`, adminToken, { 'If-None-Match': res.headers.get('etag')! })).status,
      304,
    );
  });

  test('pod pages the pod index answers equal the kube-apiserver-listed ones; finished and unbound pods included', async () => {
    // Its own namespace and node, so the other tests' counts stay as they are.
    const ns = `${RUN}-idx`;
    const node = `${RUN}-node2`;
    await post('/api/v1/namespaces', { metadata: { name: ns } });
    try {
      const onNode = (name: string) => ({
        ...pod(name, { app: 'idx' }),
        spec: { ...pod(name, {}).spec, nodeName: node },
      });
      for (const name of ['a-run', 'b-done', 'c-new', 'd-run'])
        await post(`/api/v1/namespaces/${ns}/pods`, onNode(name));
      const unbound = pod('e-unbound', { app: 'idx' });
      await post(`/api/v1/namespaces/${ns}/pods`, {
        ...unbound,
        spec: { containers: unbound.spec.containers },
      });
      await setStartTime(ns, 'a-run', '2030-01-01T00:00:05Z');
      await setStartTime(ns, 'd-run', '2030-01-01T00:00:05Z'); // a tie: broken by name
      await setStartTime(ns, 'b-done', '2030-01-01T00:00:01Z');
      await kubeRequest(kc, `/api/v1/namespaces/${ns}/pods/b-done/status`, {
        ...admin,
        method: 'PATCH',
        contentType: 'application/merge-patch+json',
        body: { status: { phase: 'Succeeded' } },
      });
      const ids = (body: ListBody) =>
        body.items.map((i) => `${i.metadata['namespace']}/${i.metadata['name']}`);
      const answer = async (path: string) => {
        const res = await get(path, adminToken);
        const text = await res.text();
        assert.equal(res.status, 200, `${path}: ${text}`);
        return { etag: res.headers.get('etag') ?? '', body: JSON.parse(text) as ListBody };
      };
      // The index sees the last change (the watch): b-done finished, so it still counts.
      await waitFor('the pod index holds the new pods', async () => {
        const { etag, body } = await answer(`${BASE}/namespaces/${ns}/pods?limit=10&sortBy=startTime`);
        return etag.startsWith('W/"index.') && body.totalItems === 5 ? true : undefined;
      });
      const queries = [
        `${BASE}/pods?limit=6&nodeName=${node}&sortBy=startTime`,
        `${BASE}/pods?limit=6&nodeName=${NODE}&sortBy=startTime`,
        `${BASE}/pods?limit=2&page=2&nodeName=${node}&sortBy=startTime&ascending=true`,
        `${BASE}/namespaces/${ns}/pods?limit=10&sortBy=startTime`,
        `${BASE}/namespaces/${ns}/pods?limit=2&page=2&sortBy=createTime`,
        `${BASE}/namespaces/${ns}/pods?limit=10&sortBy=name&ascending=true&name=-r`,
        `${BASE}/namespaces/${ns}/pods?limit=10&sortBy=creationTimestamp&names=e-unbound,a-run,nope`,
        `${BASE}/namespaces/${NS_A}/pods?limit=10&sortBy=startTime&ascending=true`,
      ];
      for (const query of queries) {
        const indexed = await answer(query);
        // A label selector every pod passes: the same page, chosen by the kube-apiserver's list.
        const listed = await answer(`${query}&labelSelector=%21${RUN}-absent`);
        assert.ok(indexed.etag.startsWith('W/"index.'), `${query} answered by the index: ${indexed.etag}`);
        assert.ok(!listed.etag.startsWith('W/"index.'), `${query} with a label selector answered upstream`);
        assert.deepEqual(ids(indexed.body), ids(listed.body), query);
        assert.equal(indexed.body.totalItems, listed.body.totalItems, query);
        assert.ok(
          indexed.body.items.every((i) => i.kind === 'Pod' && i.metadata['managedFields'] === undefined),
        );
      }
      const first = await answer(queries[3]!);
      // Latest start first, ties in reverse name order; pods never started by their creation (before 2030).
      assert.deepEqual(
        ids(first.body),
        ['d-run', 'a-run', 'b-done', 'e-unbound', 'c-new'].map((name) => `${ns}/${name}`),
      );
      assert.equal(first.body.totalItems, 5);
      assert.equal((await get(queries[3]!, adminToken, { 'If-None-Match': first.etag })).status, 304);
      // A deleted pod leaves the index's pages as soon as its watch delivers the deletion.
      await del(`/api/v1/namespaces/${ns}/pods/e-unbound`);
      const afterDelete = await waitFor('the index drops the deleted pod', async () => {
        const a = await answer(`${BASE}/namespaces/${ns}/pods?limit=10&sortBy=name&ascending=true`);
        return a.body.totalItems === 4 ? a : undefined;
      });
      assert.ok(!ids(afterDelete.body).includes(`${ns}/e-unbound`));
      assert.ok(afterDelete.etag.startsWith('W/"index.'));
      // Authorised as before: the index never answers a caller without rights.
      const denied = await get(`${BASE}/namespaces/${ns}/pods?limit=10&sortBy=startTime`, nobodyToken);
      assert.equal(denied.status, 403);
      assert.match(((await denied.json()) as { message: string }).message, /cannot list resource "pods"/);
      assert.equal(
        (await get(`${BASE}/pods?limit=6&nodeName=${node}&sortBy=startTime`, nobodyToken)).status,
        403,
      );
    } finally {
      for (const name of ['a-run', 'b-done', 'c-new', 'd-run', 'e-unbound'])
        await del(`/api/v1/namespaces/${ns}/pods/${name}`);
      await del(`/api/v1/namespaces/${ns}`);
    }
  });

  test('other kinds: workloads with their status, secrets for a caller allowed to list them', async () => {
    const deployments = await json(`${BASE}/namespaces/${NS_A}/deployments?status=stopped`);
    assert.deepEqual(names(deployments), ['web']);
    assert.equal(deployments.items[0]!.apiVersion, 'apps/v1');
    const secrets = await json(`${BASE}/namespaces/${NS_A}/secrets?name=token`);
    assert.deepEqual(names(secrets), ['token']);
    const typed = await json(`${BASE}/namespaces/${NS_A}/secrets?fieldSelector=type%3DOpaque`);
    assert.ok(names(typed).includes('token'));
    for (const kind of [
      'configmaps',
      'services',
      'serviceaccounts',
      'roles',
      'rolebindings',
      'jobs',
      'cronjobs',
    ]) {
      await json(`${BASE}/namespaces/${NS_A}/${kind}?limit=1`);
    }
    for (const kind of ['clusterroles', 'clusterrolebindings', 'storageclasses', 'persistentvolumes']) {
      await json(`${BASE}/${kind}?limit=1`);
    }
    const crds = await json(`${BASE}/customresourcedefinitions?name=User`);
    assert.ok(names(crds).includes(`users.iam.${PLATFORM}.io`), 'matched by kind');
  });

  test('workloads and services come from watch caches that follow the cluster, ready with the server', async () => {
    const verbose = await (await fetch(`${server.url}/readyz?verbose`)).text();
    for (const kind of ['deployments', 'statefulsets', 'daemonsets', 'jobs', 'cronjobs', 'services'])
      assert.match(verbose, new RegExp(`\\[\\+\\]${kind}-cache ok`));
    const page = `${BASE}/namespaces/${NS_A}/deployments?sortBy=updateTime&limit=10`;
    const first = await get(page, adminToken);
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    assert.equal((await get(page, adminToken, { 'If-None-Match': etag })).status, 304);
    await post(`/apis/apps/v1/namespaces/${NS_A}/deployments`, {
      metadata: { name: 'api' },
      spec: {
        selector: { matchLabels: { app: 'api' } },
        template: {
          metadata: { labels: { app: 'api' } },
          spec: { containers: [{ name: 'api', image: 'registry.example/api:1' }] },
        },
      },
    });
    try {
      const grown = await waitFor('the deployments cache sees the new one', async () => {
        const body = await json(page);
        return body.totalItems === 2 ? body : undefined;
      });
      assert.deepEqual(names(grown), ['api', 'web'], 'newest first');
      assert.equal((await get(page, adminToken, { 'If-None-Match': etag })).status, 200, 'a new ETag');
      // Authorized as before: the cache never answers a caller RBAC does not let list deployments there.
      assert.equal((await get(page, nobodyToken)).status, 403);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const fromCache = metrics
        .split('\n')
        .filter((l) => l.startsWith('platform_resource_responses_total{'))
        .filter((l) =>
          ['resource="deployments"', 'source="watch-cache"', 'outcome="ok"'].every((p) => l.includes(p)),
        );
      assert.ok(fromCache.length > 0 && Number(fromCache[0]!.split(' ').pop()) > 0, fromCache.join('\n'));
    } finally {
      await del(`/apis/apps/v1/namespaces/${NS_A}/deployments/api`);
    }
  });

  test('computed annotations: pvc-count, in-use, allow-snapshot, from caches that follow the cluster', async () => {
    const annotations = (o: { metadata: Record<string, unknown> }) =>
      (o.metadata['annotations'] ?? {}) as Record<string, string>;
    const claims = async () => {
      const body = await json(
        `${BASE}/namespaces/${NS_PVC}/persistentvolumeclaims?sortBy=name&ascending=true`,
      );
      return Object.fromEntries(
        body.items.map((i) => [
          i.metadata['name'] as string,
          [annotations(i)[`${PLATFORM}.io/in-use`], annotations(i)[`${PLATFORM}.io/allow-snapshot`]],
        ]),
      );
    };
    const pvcCounts = async () => {
      const body = await json(`${BASE}/storageclasses?name=${RUN}-&sortBy=name&ascending=true`);
      return body.items.map((i) => [i.metadata['name'], annotations(i)[`${PLATFORM}.io/pvc-count`]]);
    };
    /** Waits until `read` answers `expected` (the caches follow by their watch). */
    const settles = async <T>(what: string, read: () => Promise<T>, expected: T) => {
      let last: T | undefined;
      await waitFor(what, async () => {
        last = await read();
        try {
          assert.deepEqual(last, expected);
          return true;
        } catch {
          return undefined;
        }
      }).catch((err: unknown) => {
        throw new Error(`${String(err)}; last answer: ${JSON.stringify(last)}`);
      });
    };
    const podMounting = (name: string, volumes: unknown[]) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      // Not bound to a node: the kube-apiserver stores it, and deletes it at once when asked.
      metadata: { name },
      spec: { containers: [{ name: 'c', image: 'example.com/app:1' }], volumes },
    });

    await post('/apis/storage.k8s.io/v1/storageclasses', {
      metadata: { name: SC_FAST },
      provisioner: DRIVER,
    });
    await post('/apis/storage.k8s.io/v1/storageclasses', {
      metadata: { name: SC_SLOW },
      provisioner: 'kubernetes.io/no-provisioner',
    });
    await post('/api/v1/namespaces', { metadata: { name: NS_PVC } });
    const claimsPath = `/api/v1/namespaces/${NS_PVC}/persistentvolumeclaims`;
    await post(
      claimsPath,
      claim(
        'data',
        { storageClassName: SC_FAST },
        { 'volume.beta.kubernetes.io/storage-provisioner': DRIVER },
      ),
    );
    await post(claimsPath, claim('logs', { storageClassName: SC_FAST }));
    // Named by the annotation that preceded spec.storageClassName, which the original counts too.
    await post(claimsPath, claim('legacy', {}, { 'volume.beta.kubernetes.io/storage-class': SC_SLOW }));
    try {
      await settles('pvc-count per class', pvcCounts, [
        [SC_FAST, '2'],
        [SC_SLOW, '1'],
      ]);
      await settles('no claim in use, none may be snapshotted', claims, {
        data: ['false', 'false'],
        legacy: ['false', 'false'],
        logs: ['false', 'false'],
      });
      const one = await get(`${BASE}/namespaces/${NS_PVC}/persistentvolumeclaims/data`, adminToken);
      assert.equal(one.status, 200);
      const etagBefore = one.headers.get('etag')!;

      // A pod mounting `data`, and one whose generic ephemeral volume's claim is `eph-scratch`.
      const podsPath = `/api/v1/namespaces/${NS_PVC}/pods`;
      await post(
        podsPath,
        podMounting('user', [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }]),
      );
      await post(
        podsPath,
        podMounting('eph', [
          {
            name: 'scratch',
            ephemeral: {
              volumeClaimTemplate: {
                spec: {
                  accessModes: ['ReadWriteOnce'],
                  storageClassName: SC_FAST,
                  resources: { requests: { storage: '1Gi' } },
                },
              },
            },
          },
        ]),
      );
      // No controller here creates the ephemeral claim: made as the kube-controller-manager would name it.
      await post(claimsPath, claim('eph-scratch', { storageClassName: SC_FAST }));
      await settles('data and eph-scratch in use', claims, {
        data: ['true', 'false'],
        'eph-scratch': ['true', 'false'],
        legacy: ['false', 'false'],
        logs: ['false', 'false'],
      });
      await settles('the new claim counted', pvcCounts, [
        [SC_FAST, '3'],
        [SC_SLOW, '1'],
      ]);

      // A VolumeSnapshotClass for the driver `data` was provisioned by: it may be snapshotted now.
      await post(SNAPSHOT_CLASSES, {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotClass',
        metadata: { name: `${RUN}-snap` },
        driver: DRIVER,
        deletionPolicy: 'Delete',
      });
      await settles('data may be snapshotted', claims, {
        data: ['true', 'true'],
        'eph-scratch': ['true', 'false'],
        legacy: ['false', 'false'],
        logs: ['false', 'false'],
      });

      // The annotation filter sees them, as the original's does.
      const inUse = await json(
        `${BASE}/namespaces/${NS_PVC}/persistentvolumeclaims?annotation=${encodeURIComponent(`${PLATFORM}.io/in-use=true`)}&sortBy=name&ascending=true`,
      );
      assert.deepEqual(names(inUse), ['data', 'eph-scratch']);
      const sc = await json<{ metadata: { annotations: Record<string, string> } }>(
        `${BASE}/storageclasses/${SC_FAST}`,
      );
      assert.equal(sc.metadata.annotations[`${PLATFORM}.io/pvc-count`], '3');

      // The pod goes: `data` is free again. Its own resourceVersion did not change, yet its ETag does.
      await del(`${podsPath}/user?gracePeriodSeconds=0`);
      await settles('data no longer in use', async () => (await claims())['data'], ['false', 'true']);
      const changed = await get(`${BASE}/namespaces/${NS_PVC}/persistentvolumeclaims/data`, adminToken, {
        'If-None-Match': etagBefore,
      });
      assert.equal(changed.status, 200, 'not a 304: an annotation changed');
      assert.notEqual(changed.headers.get('etag'), etagBefore);
      const again = await get(`${BASE}/namespaces/${NS_PVC}/persistentvolumeclaims/data`, adminToken, {
        'If-None-Match': changed.headers.get('etag')!,
      });
      assert.equal(again.status, 304);

      // A claim deleted (its protection finalizer has no controller here to remove it) leaves the count.
      await del(`${claimsPath}/logs`);
      await kubeRequest(kc, `${claimsPath}/logs`, {
        ...admin,
        method: 'PATCH',
        contentType: 'application/merge-patch+json',
        body: { metadata: { finalizers: null } },
      });
      await settles('the deleted claim no longer counted', pvcCounts, [
        [SC_FAST, '2'],
        [SC_SLOW, '1'],
      ]);
    } finally {
      await del(`/api/v1/namespaces/${NS_PVC}/pods/eph?gracePeriodSeconds=0`);
      await del(`/api/v1/namespaces/${NS_PVC}/pods/user?gracePeriodSeconds=0`);
      for (const name of ['data', 'logs', 'legacy', 'eph-scratch']) {
        await del(`${claimsPath}/${name}`);
        await kubeRequest(kc, `${claimsPath}/${name}`, {
          ...admin,
          method: 'PATCH',
          contentType: 'application/merge-patch+json',
          body: { metadata: { finalizers: null } },
        }).catch(() => undefined);
      }
      await del(`${SNAPSHOT_CLASSES}/${RUN}-snap`);
      for (const name of [SC_FAST, SC_SLOW]) await del(`/apis/storage.k8s.io/v1/storageclasses/${name}`);
      await del(`/api/v1/namespaces/${NS_PVC}`);
    }
  });

  test('errors: unknown kind 404, bad selector 400 naming it, unknown object 404', async () => {
    const unknown = await get(`${BASE}/widgets`, adminToken);
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { kind: string }).kind, 'Status');
    const bad = await get(`${BASE}/namespaces/${NS_A}/pods?labelSelector=%3D%3Dx`, adminToken);
    assert.equal(bad.status, 400);
    const status = (await bad.json()) as { message: string; details: { causes: { field: string }[] } };
    assert.equal(status.details.causes[0]!.field, 'labelSelector');
    assert.match(status.message, /labelSelector/);
    const badSort = await get(`${BASE}/deployments?sortBy=startTime`, adminToken);
    assert.equal(badSort.status, 400);
    const missing = await get(`${BASE}/namespaces/${NS_A}/pods/nope`, adminToken);
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { message: string }).message, /pods "nope" not found/);
  });

  test('authorization: 403 without rights; a RoleBinding opens one namespace only', async () => {
    const denied = await get(`${BASE}/namespaces/${NS_A}/pods`, nobodyToken);
    assert.equal(denied.status, 403);
    assert.match(((await denied.json()) as { message: string }).message, /cannot list resource "pods"/);
    assert.equal((await get(`${BASE}/namespaces?limit=10`, nobodyToken)).status, 403);
    await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS_A}/roles`, {
      metadata: { name: 'pod-reader' },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
      ],
    });
    await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS_A}/rolebindings`, {
      metadata: { name: 'pod-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
      subjects: [{ kind: 'User', name: NOBODY.name, apiGroup: 'rbac.authorization.k8s.io' }],
    });
    const allowed = await waitFor('the RoleBinding takes effect (a cached denial expires)', async () => {
      const res = await get(`${BASE}/namespaces/${NS_A}/pods`, nobodyToken);
      return res.status === 200 ? ((await res.json()) as ListBody) : undefined;
    });
    assert.equal(allowed.totalItems, 3);
    assert.equal((await get(`${BASE}/namespaces/${NS_B}/pods`, nobodyToken)).status, 403);
    assert.equal((await get(`${BASE}/pods?nodeName=${NODE}`, nobodyToken)).status, 403);
    assert.equal((await get(`${BASE}/namespaces/${NS_A}/secrets`, nobodyToken)).status, 403);
    assert.equal((await get(`${BASE}/namespaces/${NS_A}/pods/web-1`, nobodyToken)).status, 200);
    // A RoleBinding granting `get namespaces` lets its subject read that namespace only (as kubectl would).
    assert.equal((await get(`${BASE}/namespaces/${NS_A}`, nobodyToken)).status, 200);
    assert.equal((await get(`${BASE}/namespaces/${NS_B}`, nobodyToken)).status, 403);
  });

  test('overview cards: quotas, abnormal workloads, components', async () => {
    const v1alpha2 = `/kapis/resources.${PLATFORM}.io/v1alpha2`;
    const quota = await json<{ namespace: string; data: Record<string, Record<string, string>> }>(
      `${v1alpha2}/namespaces/${NS_A}/quotas`,
    );
    assert.equal(quota.namespace, NS_A);
    assert.deepEqual(quota.data['hard'], { pods: '10', 'requests.memory': '2Gi' });
    assert.equal(quota.data['used']!['pods'], '3');
    assert.equal(quota.data['used']!['count/deployments.apps'], '1');
    assert.equal(quota.data['used']!['count/services'], '1');
    assert.deepEqual(quota.data['left'], { pods: '7', 'requests.memory': '1536Mi' });
    const empty = await json<{ data: Record<string, unknown> }>(`${v1alpha2}/namespaces/${NS_B}/quotas`);
    assert.equal(
      empty.data['hard'],
      undefined,
      'no ResourceQuota: no hard limits, as the original omits them',
    );
    assert.equal((empty.data['used'] as Record<string, string>)['count/pods'], '1');

    const abnormal = await json<{ namespace: string; data: Record<string, number> }>(
      `${v1alpha2}/namespaces/${NS_A}/abnormalworkloads`,
    );
    assert.deepEqual(abnormal, {
      namespace: NS_A,
      data: { deployments: 1, statefulsets: 0, daemonsets: 0, jobs: 0, persistentvolumeclaims: 0 },
    });

    await post('/api/v1/namespaces/kube-system/services', {
      metadata: { name: `${RUN}-dns` },
      spec: { selector: { app: `${RUN}-dns` }, ports: [{ port: 53 }] },
    });
    await post('/api/v1/namespaces/kube-system/pods', pod(`${RUN}-dns-1`, { app: `${RUN}-dns` }));
    try {
      const components = await json<
        { name: string; namespace: string; totalBackends: number; healthyBackends: number }[]
      >(`${v1alpha2}/components`);
      const dns = components.find((c) => c.name === `${RUN}-dns`);
      assert.deepEqual(
        { namespace: dns?.namespace, total: dns?.totalBackends, healthy: dns?.healthyBackends },
        { namespace: 'kube-system', total: 1, healthy: 0 },
      );
      assert.equal((await get(`${v1alpha2}/components`, nobodyToken)).status, 403);
    } finally {
      await del(`/api/v1/namespaces/kube-system/services/${RUN}-dns`);
      await del(`/api/v1/namespaces/kube-system/pods/${RUN}-dns-1`);
    }
  });
});
