import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import type { ServerProcess } from '../support/server-process.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import {
  bindWorkspaceMember,
  createWorkspace,
  createWorkspaceNamespace,
  deleteWorkspaces,
  installTenantCrds,
} from '../support/tenant-fixtures.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

// A platform name of this file's own, so its tenant CRDs and objects are nobody else's.
const P = 'tenantco';
// Another one whose tenant CRDs are never installed.
const BARE = 'tenantbare';
const PREFIX = 'tnt';
const WS = [`${PREFIX}-ws1`, `${PREFIX}-ws2`, `${PREFIX}-ws3`, `${PREFIX}-ws4`] as const;
const USERS = {
  admin: { name: `${PREFIX}-admin`, password: 'Admin-Pa55word!', groups: [] as string[] },
  tom: { name: `${PREFIX}-tom`, password: 'Tom-Pa55word!', groups: [] as string[] },
  gina: { name: `${PREFIX}-gina`, password: 'Gina-Pa55word!', groups: [`${PREFIX}-ops`] },
  nora: { name: `${PREFIX}-nora`, password: 'Nora-Pa55word!', groups: [] as string[] },
};
type Who = keyof typeof USERS;

interface ListBody {
  items: { kind?: string; metadata: { name: string; labels?: Record<string, string> } }[];
  totalItems: number;
}

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);

async function login(url: string, platform: string, who: Who): Promise<string> {
  const user = USERS[who];
  const res = await passwordLogin(url, user.name, user.password, { id: platform, secret: platform });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return String(res.body['access_token']);
}

const clusterRole = (name: string, rules: V1PolicyRule[]) =>
  rbac.createClusterRole({ body: { metadata: { name }, rules } });
const bindCluster = (name: string, role: string, subject: { kind: string; name: string }) =>
  rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
    },
  });

describe('tenant API on the real kube-apiserver (seed-shaped tenant CRDs)', () => {
  let server: ServerProcess;
  const tokens = {} as Record<Who, string>;
  const tenant = `/kapis/tenant.${P}.io`;
  const get = (who: Who, path: string) =>
    fetch(`${server.url}${tenant}${path}`, { headers: { Authorization: `Bearer ${tokens[who]}` } });
  const list = async (who: Who, path: string): Promise<ListBody> => {
    const res = await get(who, path);
    assert.equal(res.status, 200, `${who} ${path}: ${await res.clone().text()}`);
    return (await res.json()) as ListBody;
  };
  const names = (body: ListBody) => body.items.map((i) => i.metadata.name);

  before(async () => {
    await installIamCrds(kc, P);
    await installTenantCrds(kc, P);
    await deleteUsersAndSessions(
      kc,
      Object.values(USERS).map((u) => u.name),
      P,
    );
    for (const user of Object.values(USERS)) await createUser(kc, user, P);
    // One after the other: newest first is the reverse of this order (within one second, ties go by name,
    // which is the same order).
    for (const ws of WS) await createWorkspace(kc, P, ws);
    await bindWorkspaceMember(kc, P, WS[0], { kind: 'User', name: USERS.tom.name });
    await bindWorkspaceMember(kc, P, WS[1], { kind: 'Group', name: `${PREFIX}-ops` });
    await createWorkspaceNamespace(kc, P, WS[0], `${PREFIX}-a1`);
    await createWorkspaceNamespace(kc, P, WS[0], `${PREFIX}-a2`);
    await createWorkspaceNamespace(kc, P, WS[1], `${PREFIX}-b1`);
    await bindCluster(`${PREFIX}-admin`, 'cluster-admin', { kind: 'User', name: USERS.admin.name });
    // Nora: plain Kubernetes RBAC on one workspace by name, no WorkspaceRoleBinding.
    await clusterRole(`${PREFIX}-ws3-reader`, [
      {
        apiGroups: [`tenant.${P}.io`],
        resources: ['workspacetemplates'],
        resourceNames: [WS[2]],
        verbs: ['get'],
      },
    ]);
    await bindCluster(`${PREFIX}-nora`, `${PREFIX}-ws3-reader`, { kind: 'User', name: USERS.nora.name });
    // Tom may get one of ws1's two namespaces (a RoleBinding in it, as the kube-apiserver honours).
    await rbac.createNamespacedRole({
      namespace: `${PREFIX}-a1`,
      body: {
        metadata: { name: 'ns-viewer' },
        rules: [
          { apiGroups: [''], resources: ['namespaces'], resourceNames: [`${PREFIX}-a1`], verbs: ['get'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: `${PREFIX}-a1`,
      body: {
        metadata: { name: 'tom' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'ns-viewer' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USERS.tom.name }],
      },
    });
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P}`,
      '--auth.addressRequestsPerMinute=0',
    ]);
    for (const who of Object.keys(USERS) as Who[]) tokens[who] = await login(server.url, P, who);
  });

  after(async () => {
    await server?.stop();
    await deleteWorkspaces(kc, P, [...WS]);
    await deleteUsersAndSessions(
      kc,
      Object.values(USERS).map((u) => u.name),
      P,
    );
    for (const name of [`${PREFIX}-admin`, `${PREFIX}-nora`])
      await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: `${PREFIX}-ws3-reader` }).catch(() => undefined);
  });

  test("the console's workspace list (?limit=10, sortBy=createTime): everything for an admin, newest first", async () => {
    const body = await list('admin', '/v1alpha3/workspacetemplates?limit=10&sortBy=createTime');
    assert.equal(body.totalItems, 4);
    assert.deepEqual(names(body), [...WS].reverse());
    assert.equal(body.items[0]!.kind, 'WorkspaceTemplate');
    const page2 = await list(
      'admin',
      '/v1alpha3/workspacetemplates?limit=3&page=2&sortBy=name&ascending=true',
    );
    assert.deepEqual(names(page2), [WS[3]]);
    assert.equal(page2.totalItems, 4);
    assert.deepEqual(names(await list('admin', `/v1alpha3/workspacetemplates?name=ws2`)), [WS[1]]);
  });

  test('others see the workspaces they are members of, or may get by RBAC', async () => {
    assert.deepEqual(names(await list('tom', '/v1alpha3/workspacetemplates?limit=10')), [WS[0]]);
    assert.deepEqual(names(await list('gina', '/v1alpha3/workspacetemplates?limit=10')), [WS[1]]);
    assert.deepEqual(names(await list('nora', '/v1alpha3/workspacetemplates?limit=10')), [WS[2]]);
    // The console's call against servers it takes for older ones: the Workspace objects, same rule.
    const workspaces = await list('tom', '/v1alpha2/workspaces?limit=10');
    assert.deepEqual(names(workspaces), [WS[0]]);
    assert.equal(workspaces.items[0]!.kind, 'Workspace');
    assert.equal((await list('admin', '/v1alpha3/workspaces')).totalItems, 4);
  });

  test('one workspace: visible → 200, not visible → 403 whether or not it exists, unknown to an admin → 404', async () => {
    const mine = await get('tom', `/v1alpha3/workspacetemplates/${WS[0]}`);
    assert.equal(mine.status, 200);
    assert.equal(((await mine.json()) as { metadata: { name: string } }).metadata.name, WS[0]);
    assert.equal((await get('nora', `/v1alpha3/workspacetemplates/${WS[2]}`)).status, 200);
    for (const path of [
      `/v1alpha3/workspacetemplates/${WS[1]}`,
      `/v1alpha3/workspacetemplates/${PREFIX}-none`,
    ]) {
      const denied = await get('tom', path);
      assert.equal(denied.status, 403, path);
      const status = (await denied.json()) as { kind: string; reason: string };
      assert.deepEqual([status.kind, status.reason], ['Status', 'Forbidden']);
    }
    const missing = await get('admin', `/v1alpha3/workspacetemplates/${PREFIX}-none`);
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { reason: string }).reason, 'NotFound');
    assert.equal((await get('admin', `/v1alpha2/workspaces/${WS[3]}`)).status, 200);
  });

  test("a workspace's namespaces: by the workspace label, limited to what RBAC lets the caller get", async () => {
    const all = await list('admin', `/v1alpha2/workspaces/${WS[0]}/namespaces?sortBy=name&ascending=true`);
    assert.deepEqual(names(all), [`${PREFIX}-a1`, `${PREFIX}-a2`]);
    assert.deepEqual(names(await list('tom', `/v1alpha2/workspaces/${WS[0]}/namespaces`)), [`${PREFIX}-a1`]);

    const one = await get('admin', `/v1alpha2/workspaces/${WS[0]}/namespaces/${PREFIX}-a1`);
    assert.equal(one.status, 200);
    const ns = (await one.json()) as ListBody['items'][number];
    assert.equal(ns.metadata.labels?.[`${P}.io/workspace`], WS[0]);
    assert.equal((await get('tom', `/v1alpha2/workspaces/${WS[0]}/namespaces/${PREFIX}-a1`)).status, 200);
    assert.equal((await get('tom', `/v1alpha2/workspaces/${WS[0]}/namespaces/${PREFIX}-a2`)).status, 403);
    // In another workspace than the one asked about: not found there.
    assert.equal((await get('admin', `/v1alpha2/workspaces/${WS[0]}/namespaces/${PREFIX}-b1`)).status, 404);
  });

  test('bad input is a 400 naming the parameter; no token is a 401', async () => {
    const bad = await get('admin', '/v1alpha3/workspacetemplates?limit=0');
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { message: string }).message, /"limit"/);
    const anonymous = await fetch(`${server.url}${tenant}/v1alpha3/workspacetemplates`);
    assert.equal(anonymous.status, 401);
  });
});

describe('tenant API where the tenant CRDs are not installed', () => {
  let server: ServerProcess;
  let token: string;
  before(async () => {
    await installIamCrds(kc, BARE);
    await deleteUsersAndSessions(kc, [USERS.admin.name], BARE);
    await createUser(kc, USERS.admin, BARE);
    await bindCluster(`${PREFIX}-bare-admin`, 'cluster-admin', {
      kind: 'User',
      name: USERS.admin.name,
    }).catch(() => undefined);
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${BARE}`,
      '--auth.addressRequestsPerMinute=0',
    ]);
    token = await login(server.url, BARE, 'admin');
  });
  after(async () => {
    await server?.stop();
    await deleteUsersAndSessions(kc, [USERS.admin.name], BARE);
    await rbac.deleteClusterRoleBinding({ name: `${PREFIX}-bare-admin` }).catch(() => undefined);
  });

  test('lists are empty (200, not 404); one workspace is 404', async () => {
    const auth = { headers: { Authorization: `Bearer ${token}` } };
    for (const path of [
      '/v1alpha3/workspacetemplates?limit=10',
      '/v1alpha2/workspaces?limit=10',
      '/v1alpha3/workspaces',
    ]) {
      const res = await fetch(`${server.url}/kapis/tenant.${BARE}.io${path}`, auth);
      assert.equal(res.status, 200, path);
      assert.deepEqual(await res.json(), { items: [], totalItems: 0 });
    }
    const one = await fetch(
      `${server.url}/kapis/tenant.${BARE}.io/v1alpha3/workspacetemplates/anything`,
      auth,
    );
    assert.equal(one.status, 404);
  });
});
