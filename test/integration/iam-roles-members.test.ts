// The role lists and member lists of every scope (issue 33), as the original's console reads them on its
// Members, Roles and project settings pages, on a real kube-apiserver: first with the original's role
// model (seed-shaped GlobalRole, WorkspaceRole and tenant CRDs under a platform name of this file's own),
// then with only our CRDs, where the Kubernetes RBAC roles and bindings are still listed and the
// original's role kinds are empty.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installIamCrds,
  installOriginalRoleModel,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { createWorkspace, deleteWorkspaces, installTenantCrds } from '../support/tenant-fixtures.ts';

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const core = kc.makeApiClient(CoreV1Api);
const objects = kc.makeApiClient(CustomObjectsApi);
const sfx = randomBytes(3).toString('hex');
const PASSWORD = 'Roles-Pa55word!';
const RBAC_GROUP = 'rbac.authorization.k8s.io';

const ignore404 = (err: unknown) => {
  if (!(err instanceof ApiException && err.code === 404)) throw err;
};

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  managedFields?: unknown;
}
interface Item {
  apiVersion?: string;
  kind?: string;
  metadata: Meta;
  spec?: Record<string, unknown>;
}
interface List {
  items: Item[];
  totalItems: number;
}
interface Status {
  kind: string;
  code: number;
  message: string;
}

/** GETs under /kapis/iam.<p>.io/v1alpha2 as a user, logging in once per user. */
function client(server: () => ServerProcess, platform: string) {
  const tokens = new Map<string, string>();
  const token = async (user: string) => {
    if (!tokens.has(user)) {
      const login = await passwordLogin(server().url, user, PASSWORD, { id: platform, secret: platform });
      assert.equal(login.status, 200, JSON.stringify(login.body));
      tokens.set(user, String(login.body['access_token']));
    }
    return tokens.get(user)!;
  };
  const get = async <T>(user: string, path: string) => {
    const res = await fetch(`${server().url}/kapis/iam.${platform}.io/v1alpha2/${path}`, {
      headers: { Authorization: `Bearer ${await token(user)}` },
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as T, headers: res.headers };
  };
  /** A 200 list, for a caller who may read it. */
  const list = async (user: string, path: string): Promise<List> => {
    const res = await get<List>(user, path);
    assert.equal(res.status, 200, `${user} ${path}: ${res.text}`);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    return res.body;
  };
  /** An error Status with the code, its message matching. */
  const fails = async (user: string, path: string, code: number, message: RegExp) => {
    const res = await get<Status>(user, path);
    assert.equal(res.status, code, `${user} ${path}: ${res.text}`);
    assert.equal(res.body.kind, 'Status');
    assert.equal(res.body.code, code);
    assert.match(res.body.message, message);
  };
  return { get, list, fails };
}

const names = (list: List) => list.items.map((i) => i.metadata.name);
const sorted = (list: List) => names(list).sort();

const clusterRole = (name: string, rules: V1PolicyRule[], annotations: Record<string, string> = {}) =>
  rbac.createClusterRole({ body: { metadata: { name, annotations }, rules } });
const bindCluster = (name: string, role: string, user: string) =>
  rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: user }],
    },
  });
const role = (
  namespace: string,
  name: string,
  rules: V1PolicyRule[],
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
) => rbac.createNamespacedRole({ namespace, body: { metadata: { name, ...metadata }, rules } });
const bindRole = (
  namespace: string,
  name: string,
  roleName: string,
  subjects: { kind: string; name: string; namespace?: string }[],
  labels: Record<string, string> = {},
) =>
  rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name, labels },
      roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: roleName },
      subjects: subjects.map((s) => (s.kind === 'ServiceAccount' ? s : { apiGroup: RBAC_GROUP, ...s })),
    },
  });
const EVERYTHING: V1PolicyRule[] = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];

describe("the original's role model installed (seed CRDs under this file's platform name)", () => {
  const P = 'rolemembers';
  const IAM = { group: `iam.${P}.io`, version: 'v1alpha2' };
  const words = {
    aggregation: `iam.${P}.io/aggregation-roles`,
    template: `iam.${P}.io/role-template`,
    workspace: `${P}.io/workspace`,
    creator: `${P}.io/creator`,
    userRef: `iam.${P}.io/user-ref`,
  };
  const ADMIN = `rm-admin-${sfx}`; // Kubernetes cluster-admin, and platform-admin
  const ALICE = `rm-alice-${sfx}`; // the project's and the workspace's admin, a cluster viewer
  const BOB = `rm-bob-${sfx}`; // the project's and the workspace's viewer; no RBAC to read roles
  const CAROL = `rm-carol-${sfx}`; // no binding anywhere
  const USERS = [ADMIN, ALICE, BOB, CAROL];
  const WS = `rm-ws-${sfx}`;
  const WS2 = `rm-other-${sfx}`;
  const NS = `rm-ns-${sfx}`;
  const CLUSTER_VIEWER = `rm-cluster-viewer-${sfx}`;
  let server: ServerProcess;
  const { get, list, fails } = client(() => server, P);

  const custom = (plural: string, kind: string, metadata: Meta, rest: Record<string, unknown>) =>
    objects.createClusterCustomObject({
      ...IAM,
      plural,
      body: { apiVersion: `${IAM.group}/${IAM.version}`, kind, metadata, ...rest },
    });
  const workspaceRole = (name: string, labels: Record<string, string>, annotations = {}) =>
    custom('workspaceroles', 'WorkspaceRole', { name, labels, annotations }, { rules: [] });
  const workspaceBinding = (name: string, workspace: string, roleName: string, user: string) =>
    custom(
      'workspacerolebindings',
      'WorkspaceRoleBinding',
      { name, labels: { [words.workspace]: workspace, [words.userRef]: user } },
      {
        roleRef: { apiGroup: IAM.group, kind: 'WorkspaceRole', name: roleName },
        subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: user }],
      },
    );

  const cleanup = async () => {
    await server?.stop();
    for (const plural of ['globalroles', 'globalrolebindings', 'workspaceroles', 'workspacerolebindings']) {
      const found = (await objects.listClusterCustomObject({ ...IAM, plural })) as List;
      for (const item of found.items)
        await objects
          .deleteClusterCustomObject({ ...IAM, plural, name: item.metadata.name })
          .catch(ignore404);
    }
    for (const name of [`rm-admin-${sfx}`, CLUSTER_VIEWER])
      await rbac.deleteClusterRoleBinding({ name }).catch(ignore404);
    await rbac.deleteClusterRole({ name: CLUSTER_VIEWER }).catch(ignore404);
    await deleteWorkspaces(kc, P, [WS, WS2]);
    await core.deleteNamespace({ name: NS }).catch(ignore404);
    await deleteUsersAndSessions(kc, USERS, P);
  };

  before(async () => {
    await installOriginalRoleModel(kc, P);
    await installTenantCrds(kc, P);
    await cleanup();
    for (const name of USERS)
      await createUser(
        kc,
        { name, password: PASSWORD, groups: name === BOB ? ['rm-team'] : [], email: `${name}@roles.example` },
        P,
      );

    // Global: platform-admin (created by the platform, so it carries the creator annotation) aggregates
    // two templates; a GlobalRole without the annotation is not one the console lists as a role.
    await custom(
      'globalroles',
      'GlobalRole',
      {
        name: 'platform-admin',
        annotations: {
          [words.creator]: 'admin',
          [words.aggregation]: JSON.stringify(['role-template-view-users', 'role-template-manage-users']),
        },
      },
      { rules: EVERYTHING },
    );
    await custom('globalroles', 'GlobalRole', { name: 'platform-unlisted' }, { rules: [] });
    for (const name of ['role-template-view-users', 'role-template-manage-users'])
      await custom(
        'globalroles',
        'GlobalRole',
        { name, labels: { [words.template]: 'true' } },
        { rules: [] },
      );
    await custom(
      'globalrolebindings',
      'GlobalRoleBinding',
      { name: `${ADMIN}-platform-admin`, labels: { [words.userRef]: ADMIN } },
      {
        roleRef: { apiGroup: IAM.group, kind: 'GlobalRole', name: 'platform-admin' },
        subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: ADMIN }],
      },
    );

    // Cluster: Kubernetes' own cluster-admin for the administrator, a viewer role of ours for Alice.
    await bindCluster(`rm-admin-${sfx}`, 'cluster-admin', ADMIN);
    await clusterRole(CLUSTER_VIEWER, [{ apiGroups: [''], resources: ['nodes'], verbs: ['list'] }], {
      [words.creator]: 'admin',
    });
    await bindCluster(CLUSTER_VIEWER, CLUSTER_VIEWER, ALICE);

    // Workspaces: their roles, shared role templates, and Alice and Bob as members of WS.
    await createWorkspace(kc, P, WS);
    await createWorkspace(kc, P, WS2);
    await workspaceRole(
      `${WS}-admin`,
      { [words.workspace]: WS },
      {
        [words.creator]: 'admin',
        [words.aggregation]: JSON.stringify([`rm-template-view-members-${sfx}`]),
      },
    );
    await workspaceRole(`${WS}-viewer`, { [words.workspace]: WS }, { [words.creator]: 'admin' });
    await workspaceRole(`${WS2}-admin`, { [words.workspace]: WS2 }, { [words.creator]: 'admin' });
    await workspaceRole(`rm-template-view-members-${sfx}`, { [words.template]: 'true' });
    await workspaceBinding(`${ALICE}-${WS}-admin`, WS, `${WS}-admin`, ALICE);
    await workspaceBinding(`${BOB}-${WS}-viewer`, WS, `${WS}-viewer`, BOB);

    // The project: the original's default roles, a template, and its members. A subject that is no User
    // (a group, a service account, a user that does not exist) is no member.
    await core.createNamespace({ body: { metadata: { name: NS, labels: { [words.workspace]: WS } } } });
    await role(NS, 'admin', EVERYTHING, {
      annotations: { [words.creator]: 'admin', [words.aggregation]: '["role-template-view-pods"]' },
    });
    await role(NS, 'viewer', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }], {
      annotations: { [words.creator]: 'admin' },
    });
    await role(NS, 'role-template-view-pods', [], { labels: { [words.template]: 'true' } });
    await bindRole(NS, `${ALICE}-admin`, 'admin', [{ kind: 'User', name: ALICE }], {
      [words.userRef]: ALICE,
    });
    await bindRole(NS, `${BOB}-viewer`, 'viewer', [
      { kind: 'User', name: BOB },
      { kind: 'Group', name: 'rm-team' },
      { kind: 'ServiceAccount', name: 'default', namespace: NS },
      { kind: 'User', name: `rm-ghost-${sfx}` },
    ]);

    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P}`,
      '--auth.addressRequestsPerMinute=0',
      // Exactly the roles this file makes: no tenant reconciler adding the default ones.
      '--leaderElection.enabled=false',
    ]);
  });
  after(cleanup);

  test('platform roles: the console’s list (creator annotation), templates, aggregateTo, one role', async () => {
    const listed = await list(ADMIN, `globalroles?sortBy=createTime&limit=10&annotation=${words.creator}`);
    assert.deepEqual(names(listed), ['platform-admin']);
    assert.equal(listed.totalItems, 1);
    const role = listed.items[0]!;
    assert.equal(role.kind, 'GlobalRole');
    assert.equal(role.apiVersion, `iam.${P}.io/v1alpha2`);
    assert.equal(role.metadata.managedFields, undefined);

    assert.deepEqual(sorted(await list(ADMIN, `globalroles?limit=-1`)), [
      'platform-admin',
      'platform-unlisted',
      'role-template-manage-users',
      'role-template-view-users',
    ]);
    assert.deepEqual(sorted(await list(ADMIN, `globalroles?labelSelector=${words.template}`)), [
      'role-template-manage-users',
      'role-template-view-users',
    ]);
    assert.deepEqual(sorted(await list(ADMIN, 'globalroles?aggregateTo=platform-admin')), [
      'role-template-manage-users',
      'role-template-view-users',
    ]);
    // Paging: the envelope counts every match.
    const page = await list(ADMIN, 'globalroles?limit=1&page=2&sortBy=name&ascending=true');
    assert.deepEqual(names(page), ['platform-unlisted']);
    assert.equal(page.totalItems, 4);

    const one = await get<Item>(ADMIN, 'globalroles/platform-admin');
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.kind, 'GlobalRole');
    assert.equal(one.body.metadata.annotations?.[words.creator], 'admin');
    await fails(
      ADMIN,
      'globalroles/no-such-role',
      404,
      new RegExp(`globalroles.iam.${P}.io "no-such-role" not found`),
    );
    await fails(
      CAROL,
      'globalroles',
      403,
      new RegExp(`cannot list resource "globalroles" in API group "iam.${P}.io"`),
    );
    await fails(CAROL, 'globalroles/platform-admin', 403, /cannot get resource "globalroles"/);
    await fails(ADMIN, 'globalroles?limit=0', 400, /"limit"/);
  });

  test('cluster roles: Kubernetes ClusterRoles, the console’s list, one role, 404 and 403', async () => {
    const listed = await list(ADMIN, `clusterroles?annotation=${words.creator}&name=rm-cluster-viewer`);
    assert.deepEqual(names(listed), [CLUSTER_VIEWER]);
    assert.equal(listed.items[0]!.kind, 'ClusterRole');
    assert.equal(listed.items[0]!.apiVersion, 'rbac.authorization.k8s.io/v1');
    // Every ClusterRole is listed, Kubernetes' own too.
    assert.ok(names(await list(ADMIN, 'clusterroles?names=cluster-admin,view')).length === 2);
    const one = await get<Item & { rules: V1PolicyRule[] }>(ADMIN, `clusterroles/${CLUSTER_VIEWER}`);
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body.rules[0]?.resources, ['nodes']);
    await fails(
      ADMIN,
      `clusterroles/rm-none-${sfx}`,
      404,
      /clusterroles.rbac.authorization.k8s.io "rm-none-.*" not found/,
    );
    await fails(ALICE, 'clusterroles', 403, /cannot list resource "clusterroles"/);
  });

  test('workspace roles: those of the workspace, shared templates, one role; members see them, others do not', async () => {
    const path = `workspaces/${WS}/workspaceroles`;
    assert.deepEqual(names(await list(ADMIN, `${path}?sortBy=name&ascending=true`)), [
      `${WS}-admin`,
      `${WS}-viewer`,
    ]);
    assert.deepEqual(names(await list(ADMIN, `${path}?annotation=${words.creator}&name=admin`)), [
      `${WS}-admin`,
    ]);
    // The role templates are shared by every workspace, as the console asks for them.
    assert.deepEqual(names(await list(ADMIN, `${path}?label=${words.template}=true`)), [
      `rm-template-view-members-${sfx}`,
    ]);
    assert.deepEqual(names(await list(ADMIN, `${path}?aggregateTo=${WS}-admin`)), [
      `rm-template-view-members-${sfx}`,
    ]);

    const one = await get<Item>(ADMIN, `${path}/${WS}-admin`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.kind, 'WorkspaceRole');
    await fails(
      ADMIN,
      `${path}/${WS2}-admin`,
      404,
      new RegExp(`workspaceroles.iam.${P}.io "${WS2}-admin" not found`),
    );
    await fails(
      ADMIN,
      `workspaces/rm-nowhere-${sfx}/workspaceroles`,
      404,
      new RegExp(`workspacetemplates.tenant.${P}.io "rm-nowhere-${sfx}" not found`),
    );

    // Bob has no RBAC on workspace roles, but is a member of the workspace (a WorkspaceRoleBinding).
    assert.deepEqual(sorted(await list(BOB, path)), [`${WS}-admin`, `${WS}-viewer`]);
    assert.equal((await get(BOB, `${path}/${WS}-viewer`)).status, 200);
    await fails(BOB, `workspaces/${WS2}/workspaceroles`, 403, /cannot list resource "workspaceroles"/);
    // Carol sees no workspace: 403, whether it exists or not.
    await fails(CAROL, path, 403, /cannot list resource "workspaceroles"/);
    await fails(CAROL, `workspaces/rm-nowhere-${sfx}/workspaceroles`, 403, /forbidden/);
  });

  test('project roles: the Roles of the namespace, templates, aggregateTo, one role, 404 and 403', async () => {
    const path = `namespaces/${NS}/roles`;
    // The console's project roles page and its project settings count.
    const listed = await list(ADMIN, `${path}?sortBy=createTime&limit=10&annotation=${words.creator}`);
    assert.deepEqual(names(listed).sort(), ['admin', 'viewer']);
    assert.equal(listed.totalItems, 2);
    assert.equal(listed.items[0]!.kind, 'Role');
    assert.equal(listed.items[0]!.metadata.namespace, NS);
    assert.deepEqual(names(await list(ADMIN, `${path}?label=${words.template}=true`)), [
      'role-template-view-pods',
    ]);
    assert.deepEqual(names(await list(ADMIN, `${path}?aggregateTo=admin`)), ['role-template-view-pods']);
    assert.equal((await get(ADMIN, `${path}/viewer`)).status, 200);
    await fails(ADMIN, `${path}/operator`, 404, /roles.rbac.authorization.k8s.io "operator" not found/);
    await fails(
      ADMIN,
      `namespaces/rm-nowhere-${sfx}/roles`,
      404,
      new RegExp(`namespaces "rm-nowhere-${sfx}" not found`),
    );
    // Alice's Role in the namespace lets her list its roles; Bob's does not; Carol has none.
    assert.equal((await list(ALICE, path)).totalItems, 3);
    await fails(
      BOB,
      path,
      403,
      new RegExp(`cannot list resource "roles" in API group "${RBAC_GROUP}" in the namespace "${NS}"`),
    );
    await fails(CAROL, `namespaces/rm-nowhere-${sfx}/roles`, 403, /forbidden/);
  });

  test('project members: Users of the RoleBindings with their role; filters, paging, one member', async () => {
    const path = `namespaces/${NS}/members`;
    const members = await list(ADMIN, path);
    assert.deepEqual(sorted(members), [ALICE, BOB]);
    assert.equal(members.totalItems, 2);
    const alice = members.items.find((m) => m.metadata.name === ALICE)!;
    assert.equal(alice.kind, 'User');
    assert.equal(alice.metadata.annotations?.[`iam.${P}.io/role`], 'admin');
    assert.equal(alice.spec?.['email'], `${ALICE}@roles.example`);
    assert.doesNotMatch(JSON.stringify(members), /password|\$2[aby]\$/);
    assert.equal(
      members.items.find((m) => m.metadata.name === BOB)!.metadata.annotations?.[`iam.${P}.io/role`],
      'viewer',
    );

    assert.deepEqual(names(await list(ADMIN, `${path}?role=viewer`)), [BOB]);
    assert.deepEqual(names(await list(ADMIN, `${path}?email=${ALICE}@roles.example`)), [ALICE]);
    assert.deepEqual(names(await list(ADMIN, `${path}?ingroup=rm-team`)), [BOB]);
    assert.deepEqual(names(await list(ADMIN, `${path}?notingroup=rm-team`)), [ALICE]);
    const page = await list(ADMIN, `${path}?sortBy=name&ascending=true&limit=1&page=2`);
    assert.deepEqual(names(page), [BOB]);
    assert.equal(page.totalItems, 2);

    const one = await get<Item>(ADMIN, `${path}/${BOB}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.metadata.annotations?.[`iam.${P}.io/role`], 'viewer');
    await fails(ADMIN, `${path}/${CAROL}`, 404, new RegExp(`users.iam.${P}.io "${CAROL}" not found`));
    await fails(ADMIN, `${path}/rm-ghost-${sfx}`, 404, /not found/);
    await fails(ADMIN, `namespaces/rm-nowhere-${sfx}/members`, 404, /namespaces "rm-nowhere-.*" not found/);
    // Alice's admin Role lets her list the namespace's RoleBindings; Bob's viewer Role does not.
    assert.equal((await list(ALICE, path)).totalItems, 2);
    await fails(BOB, path, 403, /cannot list resource "rolebindings"/);
    await fails(BOB, `${path}/${BOB}`, 403, /cannot list resource "rolebindings"/);
  });

  test('the caches follow the cluster: a new binding makes a member, its deletion ends it', async () => {
    const path = `namespaces/${NS}/members`;
    await bindRole(NS, `${CAROL}-viewer`, 'viewer', [{ kind: 'User', name: CAROL }]);
    await waitFor('Carol listed', async () =>
      names(await list(ADMIN, path)).includes(CAROL) ? true : undefined,
    );
    await rbac.deleteNamespacedRoleBinding({ namespace: NS, name: `${CAROL}-viewer` });
    await waitFor('Carol gone', async () =>
      (await get(ADMIN, `${path}/${CAROL}`)).status === 404 ? true : undefined,
    );
  });

  test('workspace members: Users of the WorkspaceRoleBindings labelled with it; a member reads them', async () => {
    const path = `workspaces/${WS}/workspacemembers`;
    const members = await list(ADMIN, path);
    assert.deepEqual(sorted(members), [ALICE, BOB]);
    const roleOf = (list: List, user: string) =>
      list.items.find((m) => m.metadata.name === user)?.metadata.annotations?.[`iam.${P}.io/workspacerole`];
    assert.equal(roleOf(members, ALICE), `${WS}-admin`);
    assert.equal(roleOf(members, BOB), `${WS}-viewer`);
    assert.deepEqual(names(await list(ADMIN, `${path}?workspacerole=${WS}-viewer`)), [BOB]);
    assert.deepEqual(names(await list(ADMIN, `workspaces/${WS2}/workspacemembers`)), []);
    const one = await get<Item>(BOB, `${path}/${ALICE}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.metadata.annotations?.[`iam.${P}.io/workspacerole`], `${WS}-admin`);
    assert.equal((await list(BOB, path)).totalItems, 2);
    await fails(ADMIN, `${path}/${CAROL}`, 404, new RegExp(`"${CAROL}" not found`));
    await fails(
      ADMIN,
      `workspaces/rm-nowhere-${sfx}/workspacemembers`,
      404,
      /workspacetemplates.* not found/,
    );
    await fails(CAROL, path, 403, /cannot list resource "workspacerolebindings"/);
  });

  test('cluster members: Users of the ClusterRoleBindings with their cluster role', async () => {
    const members = await list(ADMIN, `clustermembers?names=${ADMIN},${ALICE},${BOB},${CAROL}`);
    assert.deepEqual(sorted(members), [ADMIN, ALICE].sort());
    const roleOf = (user: string) =>
      members.items.find((m) => m.metadata.name === user)?.metadata.annotations?.[`iam.${P}.io/clusterrole`];
    assert.equal(roleOf(ADMIN), 'cluster-admin');
    assert.equal(roleOf(ALICE), CLUSTER_VIEWER);
    // A subject that is no User of the platform (Kubernetes' own system users) is no member.
    assert.ok(!names(await list(ADMIN, 'clustermembers?limit=-1')).some((n) => n.startsWith('system:')));
    assert.deepEqual(names(await list(ADMIN, `clustermembers?clusterrole=${CLUSTER_VIEWER}`)), [ALICE]);
    const one = await get<Item>(ADMIN, `clustermembers/${ALICE}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.metadata.annotations?.[`iam.${P}.io/clusterrole`], CLUSTER_VIEWER);
    await fails(ADMIN, `clustermembers/${BOB}`, 404, new RegExp(`users.iam.${P}.io "${BOB}" not found`));
    await fails(ALICE, 'clustermembers', 403, /cannot list resource "clusterrolebindings"/);
  });
});

describe('only our CRDs: Kubernetes RBAC roles and bindings listed, the original’s role kinds empty', () => {
  const P = 'rolemembersbare';
  const ADMIN = `rmb-admin-${sfx}`;
  const DAN = `rmb-dan-${sfx}`;
  const NS = `rmb-ns-${sfx}`;
  let server: ServerProcess;
  const { get, list, fails } = client(() => server, P);

  const cleanup = async () => {
    await server?.stop();
    await rbac.deleteClusterRoleBinding({ name: ADMIN }).catch(ignore404);
    await core.deleteNamespace({ name: NS }).catch(ignore404);
    await deleteUsersAndSessions(kc, [ADMIN, DAN], P);
  };

  before(async () => {
    await installIamCrds(kc, P);
    await cleanup();
    for (const name of [ADMIN, DAN]) await createUser(kc, { name, password: PASSWORD, groups: [] }, P);
    await bindCluster(ADMIN, 'cluster-admin', ADMIN);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await role(NS, 'deployer', [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }]);
    await bindRole(NS, `${DAN}-deployer`, 'deployer', [{ kind: 'User', name: DAN }]);
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P}`,
      '--auth.addressRequestsPerMinute=0',
      // Exactly the roles this file makes: no tenant reconciler adding the default ones.
      '--leaderElection.enabled=false',
    ]);
  });
  after(cleanup);

  test('GlobalRoles are not installed: an empty list, and one is a 404', async () => {
    assert.deepEqual(await list(ADMIN, 'globalroles?limit=-1'), { items: [], totalItems: 0 });
    await fails(
      ADMIN,
      'globalroles/platform-admin',
      404,
      new RegExp(`globalroles.iam.${P}.io "platform-admin" not found`),
    );
  });

  test('no workspaces are installed: every workspace is unknown', async () => {
    await fails(
      ADMIN,
      'workspaces/any/workspaceroles',
      404,
      new RegExp(`workspacetemplates.tenant.${P}.io "any" not found`),
    );
    await fails(ADMIN, 'workspaces/any/workspacemembers', 404, /"any" not found/);
  });

  test('cluster and project roles and members come from Kubernetes RBAC', async () => {
    assert.deepEqual(names(await list(ADMIN, 'clusterroles?names=cluster-admin')), ['cluster-admin']);
    const roles = await list(ADMIN, `namespaces/${NS}/roles`);
    assert.deepEqual(names(roles), ['deployer']);
    assert.equal(roles.items[0]!.kind, 'Role');
    const members = await list(ADMIN, `namespaces/${NS}/members`);
    assert.deepEqual(names(members), [DAN]);
    assert.equal(members.items[0]!.metadata.annotations?.[`iam.${P}.io/role`], 'deployer');
    const admin = await list(ADMIN, `clustermembers?names=${ADMIN}`);
    assert.equal(admin.items[0]!.metadata.annotations?.[`iam.${P}.io/clusterrole`], 'cluster-admin');
    assert.equal((await get(DAN, `namespaces/${NS}/members`)).status, 403);
  });
});
