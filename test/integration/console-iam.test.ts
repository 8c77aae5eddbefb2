// The original's console reads a user, the user's role templates at every scope and the user list
// (../shared reference: console.md R-c, R-d, N2; issue 18), replayed as it sends them on a real
// kube-apiserver: first with the original's role model installed (seed-shaped GlobalRole CRDs, a
// platform-admin GlobalRole with role templates, a workspace, Kubernetes roles carrying the original's
// annotations, `platformName: kubesphere`), then with only our CRDs, where the templates are derived from
// Kubernetes RBAC.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type V1PolicyRule,
} from '@kubernetes/client-node';
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

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const core = kc.makeApiClient(CoreV1Api);
const objects = kc.makeApiClient(CustomObjectsApi);
const sfx = randomBytes(3).toString('hex');
const PASSWORD = 'iam-Pa55word!';
const ignore = () => undefined;

interface Role {
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    creationTimestamp?: string;
    annotations?: Record<string, string>;
  };
}

/** What the console makes of an answer: `{module: [actions]}` from each item's role-template-rules. */
function rulesOf(platform: string, roles: Role[]): Record<string, string[]> {
  const rules: Record<string, string[]> = {};
  for (const role of roles) {
    const text = role.metadata.annotations?.[`iam.${platform}.io/role-template-rules`];
    assert.ok(text, `${role.metadata.name} has role-template-rules`);
    for (const [module, action] of Object.entries(JSON.parse(text) as Record<string, string | string[]>)) {
      rules[module] = [...new Set([...(rules[module] ?? []), ...[action].flat()])].sort();
    }
  }
  return rules;
}

/** Newest first, ties by name descending: the original's default list order. */
function assertNewestFirst(roles: Role[]): void {
  for (let i = 1; i < roles.length; i++) {
    const [a, b] = [roles[i - 1]!.metadata, roles[i]!.metadata];
    const order =
      Date.parse(b.creationTimestamp!) - Date.parse(a.creationTimestamp!) || (a.name > b.name ? -1 : 1);
    assert.ok(order < 0, `${a.name} before ${b.name}`);
  }
}

function client(server: () => ServerProcess, platform: string) {
  const tokens = new Map<string, string>();
  const token = async (user: string) => {
    if (!tokens.has(user)) {
      const login = await passwordLogin(server().url, user, PASSWORD, { id: platform, secret: platform });
      assert.equal(login.status, 200, JSON.stringify(login.body));
      tokens.set(user, login.body['access_token'] as string);
    }
    return tokens.get(user)!;
  };
  /** A GET as the console sends it (proxied with the user's token), path relative to /kapis/iam.<p>.io/v1alpha2. */
  return async <T = unknown>(user: string, path: string) => {
    const res = await fetch(`${server().url}/kapis/iam.${platform}.io/v1alpha2/${path}`, {
      headers: { Authorization: `Bearer ${await token(user)}` },
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as T };
  };
}

describe("the original's role model installed (platformName kubesphere)", () => {
  const P = 'kubesphere';
  const IAM = { group: 'iam.kubesphere.io', version: 'v1alpha2' };
  const ADA = `ciam-ada-${sfx}`; // platform-admin
  const RITA = `ciam-rita-${sfx}`; // no global role; member of a workspace (by group) and a namespace
  const WS = `ciam-ws-${sfx}`;
  const NS = `ciam-ns-${sfx}`;
  const CLUSTER_ROLE = `ciam-cluster-admin-${sfx}`;
  let server: ServerProcess;
  const get = client(() => server, P);

  const globalRole = (name: string, annotations: Record<string, string>) =>
    objects.createClusterCustomObject({
      ...IAM,
      plural: 'globalroles',
      body: {
        apiVersion: 'iam.kubesphere.io/v1alpha2',
        kind: 'GlobalRole',
        metadata: { name, annotations },
        rules: [],
      },
    });
  const template = (module: string, action: string) => ({
    'iam.kubesphere.io/role-template-rules': JSON.stringify({ [module]: action }),
  });
  const globalTemplates = [
    'role-template-view-clusters',
    'role-template-manage-clusters',
    'role-template-view-users',
  ];

  const cleanup = async () => {
    for (const name of ['platform-admin', ...globalTemplates])
      await objects.deleteClusterCustomObject({ ...IAM, plural: 'globalroles', name }).catch(ignore);
    await objects
      .deleteClusterCustomObject({ ...IAM, plural: 'globalrolebindings', name: `${ADA}-platform-admin` })
      .catch(ignore);
    for (const name of [
      `${WS}-admin`,
      `${WS}-role-template-view-projects`,
      `${WS}-role-template-manage-members`,
    ])
      await objects.deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name }).catch(ignore);
    await objects
      .deleteClusterCustomObject({ ...IAM, plural: 'workspacerolebindings', name: `${WS}-team` })
      .catch(ignore);
    for (const name of [CLUSTER_ROLE, `${CLUSTER_ROLE}-view-nodes`, `${CLUSTER_ROLE}-manage-projects`])
      await rbac.deleteClusterRole({ name }).catch(ignore);
    await rbac.deleteClusterRoleBinding({ name: CLUSTER_ROLE }).catch(ignore);
    await core.deleteNamespace({ name: NS }).catch(ignore);
    await deleteUsersAndSessions(kc, [ADA, RITA], P);
  };

  before(async () => {
    await installOriginalRoleModel(kc, P);
    await cleanup();
    await createUser(
      kc,
      {
        name: ADA,
        password: PASSWORD,
        groups: [],
        email: `${ADA}@iam.example`,
        // Both can carry what must not be shown: the hash (kubectl apply) and the admission ledger.
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
            spec: { password: '$2a$10$secret' },
          }),
          'iam.kubesphere.io/login-attempts': '{"f":[1],"p":{}}',
        },
      },
      P,
    );
    await createUser(
      kc,
      { name: RITA, password: PASSWORD, groups: ['ciam-team'], email: `${RITA}@iam.example` },
      P,
    );

    // Global: platform-admin aggregates three templates and one that does not exist.
    await globalRole('role-template-view-clusters', template('clusters', 'view'));
    await globalRole('role-template-manage-clusters', template('clusters', 'manage'));
    await globalRole('role-template-view-users', template('users', 'view'));
    await globalRole('platform-admin', {
      'iam.kubesphere.io/aggregation-roles': JSON.stringify([...globalTemplates, 'role-template-gone']),
    });
    await objects.createClusterCustomObject({
      ...IAM,
      plural: 'globalrolebindings',
      body: {
        apiVersion: 'iam.kubesphere.io/v1alpha2',
        kind: 'GlobalRoleBinding',
        metadata: { name: `${ADA}-platform-admin` },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: ADA }],
        roleRef: { apiGroup: 'iam.kubesphere.io', kind: 'GlobalRole', name: 'platform-admin' },
      },
    });

    // Cluster: a Kubernetes ClusterRole with the original's aggregation annotation, bound to Ada. Its
    // rules also give her the RBAC rights to read other users.
    for (const [suffix, rules] of [
      ['view-nodes', { nodes: 'view' }],
      ['manage-projects', { projects: 'manage' }],
    ] as const) {
      await rbac.createClusterRole({
        body: {
          metadata: {
            name: `${CLUSTER_ROLE}-${suffix}`,
            annotations: { 'iam.kubesphere.io/role-template-rules': JSON.stringify(rules) },
          },
          rules: [],
        },
      });
    }
    await rbac.createClusterRole({
      body: {
        metadata: {
          name: CLUSTER_ROLE,
          annotations: {
            'iam.kubesphere.io/aggregation-roles': JSON.stringify([
              `${CLUSTER_ROLE}-view-nodes`,
              `${CLUSTER_ROLE}-manage-projects`,
            ]),
          },
        },
        rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: CLUSTER_ROLE },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CLUSTER_ROLE },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: ADA }],
      },
    });

    // Workspace: Rita's group is bound to the workspace's admin role.
    const workspaceRole = (name: string, annotations: Record<string, string>) =>
      objects.createClusterCustomObject({
        ...IAM,
        plural: 'workspaceroles',
        body: {
          apiVersion: 'iam.kubesphere.io/v1alpha2',
          kind: 'WorkspaceRole',
          metadata: { name, labels: { 'kubesphere.io/workspace': WS }, annotations },
          rules: [],
        },
      });
    await workspaceRole(`${WS}-role-template-view-projects`, template('projects', 'view'));
    await workspaceRole(`${WS}-role-template-manage-members`, template('members', 'manage'));
    await workspaceRole(`${WS}-admin`, {
      'iam.kubesphere.io/aggregation-roles': JSON.stringify([
        `${WS}-role-template-view-projects`,
        `${WS}-role-template-manage-members`,
      ]),
    });
    await objects.createClusterCustomObject({
      ...IAM,
      plural: 'workspacerolebindings',
      body: {
        apiVersion: 'iam.kubesphere.io/v1alpha2',
        kind: 'WorkspaceRoleBinding',
        metadata: { name: `${WS}-team`, labels: { 'kubesphere.io/workspace': WS } },
        subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'ciam-team' }],
        roleRef: { apiGroup: 'iam.kubesphere.io', kind: 'WorkspaceRole', name: `${WS}-admin` },
      },
    });

    // Namespace: a Role aggregating a template Role of the same namespace, bound to Rita.
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await rbac.createNamespacedRole({
      namespace: NS,
      body: {
        metadata: {
          name: 'role-template-view-pods',
          annotations: { 'iam.kubesphere.io/role-template-rules': '{"pods":"view"}' },
        },
        rules: [],
      },
    });
    await rbac.createNamespacedRole({
      namespace: NS,
      body: {
        metadata: {
          name: 'operator',
          annotations: { 'iam.kubesphere.io/aggregation-roles': '["role-template-view-pods"]' },
        },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: NS,
      body: {
        metadata: { name: `${RITA}-operator` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'operator' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: RITA }],
      },
    });

    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P}`,
      '--auth.addressRequestsPerMinute=0',
    ]);
  });
  after(async () => {
    await server?.stop();
    await cleanup();
  });

  test('R-c: the user with its global role and without any secret', async () => {
    const own = await get<{
      metadata: { name: string; annotations?: Record<string, string> };
      spec: Record<string, unknown>;
    }>(ADA, `users/${ADA}`);
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.metadata.name, ADA);
    assert.equal(own.body.metadata.annotations?.['iam.kubesphere.io/globalrole'], 'platform-admin');
    assert.equal(own.body.spec['email'], `${ADA}@iam.example`);
    assert.equal(own.body.spec['password'], undefined);
    assert.doesNotMatch(own.text, /password|\$2[aby]\$|login-attempts|last-applied/);

    const rita = await get<{ metadata: { annotations?: Record<string, string> } }>(RITA, `users/${RITA}`);
    assert.equal(rita.status, 200, rita.text);
    assert.equal(
      rita.body.metadata.annotations?.['iam.kubesphere.io/globalrole'],
      undefined,
      'no binding, no role',
    );
    // Ada's ClusterRole lets her read others; Rita has no RBAC on users.
    assert.equal((await get(ADA, `users/${RITA}`)).status, 200);
    const forbidden = await get<{ kind: string; code: number; message: string }>(RITA, `users/${ADA}`);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.kind, 'Status');
    assert.match(forbidden.body.message, /cannot get resource "users"/);
    const unknown = await get<{ kind: string; code: number }>(ADA, `users/ciam-nobody-${sfx}`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.kind, 'Status');
  });

  test('R-d: the templates aggregated into the global role; [] without a binding', async () => {
    const roles = await get<Role[]>(ADA, `users/${ADA}/globalroles`);
    assert.equal(roles.status, 200, roles.text);
    assert.deepEqual(
      roles.body.map((r) => r.metadata.name).sort(),
      [...globalTemplates].sort(),
      'the missing one skipped',
    );
    assert.deepEqual(rulesOf(P, roles.body), { clusters: ['manage', 'view'], users: ['view'] });
    assertNewestFirst(roles.body);
    assert.deepEqual((await get(RITA, `users/${RITA}/globalroles`)).body, []);
    assert.equal((await get(RITA, `users/${ADA}/globalroles`)).status, 403, "another user's roles need RBAC");
    assert.equal((await get(ADA, `users/${RITA}/globalroles`)).status, 200);
    assert.equal((await get(ADA, `users/ciam-nobody-${sfx}/globalroles`)).status, 404);
  });

  test('N2 and the member scopes: cluster, workspace (by group), namespace', async () => {
    const cluster = await get<Role[]>(ADA, `clustermembers/${ADA}/clusterroles`);
    assert.equal(cluster.status, 200, cluster.text);
    assert.deepEqual(rulesOf(P, cluster.body), { nodes: ['view'], projects: ['manage'] });
    assert.deepEqual((await get(RITA, `clustermembers/${RITA}/clusterroles`)).body, []);
    assert.equal((await get(RITA, `clustermembers/${ADA}/clusterroles`)).status, 403);

    const workspace = await get<Role[]>(RITA, `workspaces/${WS}/workspacemembers/${RITA}/workspaceroles`);
    assert.equal(workspace.status, 200, workspace.text);
    assert.deepEqual(rulesOf(P, workspace.body), { members: ['manage'], projects: ['view'] });
    assert.deepEqual(
      (await get(RITA, `workspaces/other-${WS}/workspacemembers/${RITA}/workspaceroles`)).body,
      [],
    );

    const namespace = await get<Role[]>(RITA, `namespaces/${NS}/members/${RITA}/roles`);
    assert.equal(namespace.status, 200, namespace.text);
    assert.deepEqual(rulesOf(P, namespace.body), { pods: ['view'] });
    assert.ok(namespace.body.every((r) => r.metadata.namespace === NS));
    assert.deepEqual((await get(ADA, `namespaces/${NS}/members/${ADA}/roles`)).body, []);
    assert.equal((await get(RITA, `namespaces/${NS}/members/${ADA}/roles`)).status, 403);
    assert.equal((await get(ADA, `namespaces/${NS}/members/${RITA}/roles`)).status, 200);
  });

  test('the users page: the list envelope, sorted and paged as the console asks', async () => {
    const page = await get<{
      items: { metadata: { name: string; annotations?: Record<string, string> } }[];
      totalItems: number;
    }>(ADA, `users?limit=10&sortBy=createTime&name=ciam-`);
    assert.equal(page.status, 200, page.text);
    // Newest first; ties (created within the same second) by name, descending.
    assertNewestFirst(page.body.items as Role[]);
    const names = page.body.items.map((u) => u.metadata.name);
    assert.ok(names.includes(ADA) && names.includes(RITA), names.join());
    assert.equal(page.body.totalItems, page.body.items.length);
    assert.doesNotMatch(page.text, /password|\$2[aby]\$|login-attempts/);
    const ada = page.body.items.find((u) => u.metadata.name === ADA)!;
    assert.equal(ada.metadata.annotations?.['iam.kubesphere.io/globalrole'], 'platform-admin');

    const byName = await get<{ items: { metadata: { name: string } }[]; totalItems: number }>(
      ADA,
      `users?sortBy=name&ascending=true&limit=1&page=2&names=${ADA},${RITA}`,
    );
    assert.deepEqual(byName.body, { ...byName.body, totalItems: 2 });
    assert.deepEqual(
      byName.body.items.map((u) => u.metadata.name),
      [RITA],
    );
    const admins = await get<{ items: { metadata: { name: string } }[] }>(
      ADA,
      `users?globalrole=platform-admin&name=${sfx}`,
    );
    assert.deepEqual(
      admins.body.items.map((u) => u.metadata.name),
      [ADA],
    );

    assert.equal(
      (await get(RITA, 'users?limit=10&sortBy=createTime')).status,
      403,
      'listing needs RBAC list',
    );
    const bad = await get<{ message: string }>(ADA, 'users?sortBy=age');
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /sortBy/);
    const scoped = await get<{ message: string }>(ADA, `users?workspace=${WS}`);
    assert.equal(scoped.status, 400);
    assert.match(scoped.body.message, /workspace/);
  });
});

describe('only our CRDs: role templates derived from Kubernetes RBAC (platformName platform)', () => {
  const P = 'platform';
  const DORA = `ciam-dora-${sfx}`; // may do anything
  const VIC = `ciam-vic-${sfx}`; // reads nodes and pods cluster-wide, deployments in one namespace
  const NS = `ciam-derived-${sfx}`;
  let server: ServerProcess;
  const get = client(() => server, P);

  const cleanup = async () => {
    for (const name of [`ciam-everything-${sfx}`, `ciam-viewer-${sfx}`, `ciam-deploy-reader-${sfx}`])
      await rbac.deleteClusterRole({ name }).catch(ignore);
    for (const name of [`ciam-everything-${sfx}`, `ciam-viewer-${sfx}`])
      await rbac.deleteClusterRoleBinding({ name }).catch(ignore);
    await core.deleteNamespace({ name: NS }).catch(ignore);
    await deleteUsersAndSessions(kc, [DORA, VIC], P);
  };
  const bind = async (name: string, rules: V1PolicyRule[], subject: { kind: string; name: string }) => {
    await rbac.createClusterRole({ body: { metadata: { name }, rules } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
      },
    });
  };

  before(async () => {
    await installIamCrds(kc, P);
    await cleanup();
    await createUser(kc, { name: DORA, password: PASSWORD, groups: ['ciam-admins'] }, P);
    await createUser(kc, { name: VIC, password: PASSWORD, groups: [`ciam-viewers-${sfx}`] }, P);
    await bind(`ciam-everything-${sfx}`, [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }], {
      kind: 'User',
      name: DORA,
    });
    await bind(
      `ciam-viewer-${sfx}`,
      [{ apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['get', 'list'] }],
      { kind: 'Group', name: `ciam-viewers-${sfx}` },
    );
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await rbac.createClusterRole({
      body: {
        metadata: { name: `ciam-deploy-reader-${sfx}` },
        rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: NS,
      body: {
        metadata: { name: 'vic-deployments' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: `ciam-deploy-reader-${sfx}`,
        },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: VIC }],
      },
    });
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      '--auth.addressRequestsPerMinute=0',
    ]);
  });
  after(async () => {
    await server?.stop();
    await cleanup();
  });

  test('who may do everything is shown as platform-admin, with every module to manage', async () => {
    const dora = await get<{ metadata: { annotations?: Record<string, string> } }>(DORA, `users/${DORA}`);
    assert.equal(dora.status, 200, dora.text);
    assert.equal(dora.body.metadata.annotations?.['iam.platform.io/globalrole'], 'platform-admin');
    const global = await get<Role[]>(DORA, `users/${DORA}/globalroles`);
    assert.deepEqual(rulesOf(P, global.body), {
      clusters: ['manage'],
      users: ['manage'],
      workspaces: ['manage'],
    });
    assert.ok(
      global.body.every(
        (r) => r.kind === 'GlobalRole' && r.metadata.annotations?.['iam.platform.io/derived-from'],
      ),
    );
    const cluster = await get<Role[]>(DORA, `clustermembers/${DORA}/clusterroles`);
    const modules = rulesOf(P, cluster.body);
    assert.ok(Object.values(modules).every((a) => a.join() === 'manage'));
    for (const m of [
      'nodes',
      'projects',
      'deployments',
      'pods',
      'secrets',
      'volumes',
      'storageclasses',
      'members',
      'roles',
    ])
      assert.ok(m in modules, m);
  });

  test('a viewer gets exactly the modules RBAC allows, and the server serves what the menus show', async () => {
    const vic = await get<{ metadata: { annotations?: Record<string, string> } }>(VIC, `users/${VIC}`);
    assert.equal(vic.status, 200, vic.text);
    assert.equal(vic.body.metadata.annotations?.['iam.platform.io/globalrole'], undefined);
    assert.deepEqual(rulesOf(P, (await get<Role[]>(VIC, `users/${VIC}/globalroles`)).body), {
      clusters: ['view'],
    });
    assert.deepEqual(rulesOf(P, (await get<Role[]>(VIC, `clustermembers/${VIC}/clusterroles`)).body), {
      nodes: ['view'],
      pods: ['view'],
    });
    const namespace = await get<Role[]>(VIC, `namespaces/${NS}/members/${VIC}/roles`);
    assert.deepEqual(rulesOf(P, namespace.body), { deployments: ['view'], pods: ['view'] });
    assert.ok(namespace.body.every((r) => r.kind === 'Role' && r.metadata.namespace === NS));
    assert.deepEqual((await get(VIC, `workspaces/any/workspacemembers/${VIC}/workspaceroles`)).body, []);

    // The menus match the server: nodes are listed, users are not.
    const nodes = await fetch(
      `${server.url}/kapis/resources.platform.io/v1alpha3/nodes?sortBy=createTime&limit=10`,
      {
        headers: {
          Authorization: `Bearer ${(await passwordLogin(server.url, VIC, PASSWORD)).body['access_token'] as string}`,
        },
      },
    );
    assert.equal(nodes.status, 200);
    assert.equal((await get(VIC, 'users?limit=10&sortBy=createTime')).status, 403);
    assert.equal((await get(VIC, `users/${DORA}`)).status, 403);

    // Asked by someone allowed to, about another user: the same answer as the user's own.
    const asked = await get<Role[]>(DORA, `clustermembers/${VIC}/clusterroles`);
    assert.deepEqual(rulesOf(P, asked.body), { nodes: ['view'], pods: ['view'] });
  });
});
