// Creating, replacing, patching and deleting the Roles of a project and the ClusterRoles (issue 33 §1
// "Roles at four scopes", §2 "No escalation"), on a real kube-apiserver, in both profiles: the original's
// CRDs (seed-shaped, under a platform name of this file's own) and only our chart's. The writes are made
// as the caller, so Kubernetes RBAC decides them and refuses an escalation itself.
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
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import { iamProfiles } from '../support/iam-profiles.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { createWorkspace, deleteWorkspaces } from '../support/tenant-fixtures.ts';

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

interface Status {
  kind: string;
  code: number;
  message: string;
}
interface Role {
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
  rules?: V1PolicyRule[];
}

const VIEW_PODS: V1PolicyRule[] = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }];
const VIEW_CONFIGMAPS: V1PolicyRule[] = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }];
const ALL_PODS: V1PolicyRule[] = [{ apiGroups: [''], resources: ['pods'], verbs: ['*'] }];
const plain = (rules: V1PolicyRule[] | undefined) =>
  (rules ?? []).map((r) => ({ apiGroups: r.apiGroups, resources: r.resources, verbs: r.verbs }));

const profiles = iamProfiles(kc, { original: 'rolewrites', ours: 'rolewritesbare' });

for (const profile of profiles) {
  describe(`roles written: ${profile.title}`, () => {
    const P = profile.platform;
    const tag = P === 'rolewrites' ? 'rw' : 'rwb';
    const ADMIN = `${tag}-admin-${sfx}`; // Kubernetes cluster-admin
    const OWNER = `${tag}-owner-${sfx}`; // may write Roles in the project, holds only the pod viewer's rules
    const USERS = [ADMIN, OWNER];
    const NS = `${tag}-ns-${sfx}`;
    const TEMPLATE = `iam.${P}.io/role-template`;
    const AGGREGATION = `iam.${P}.io/aggregation-roles`;
    const C_VIEW_PODS = `${tag}-tpl-view-pods-${sfx}`;
    const C_VIEW_CM = `${tag}-tpl-view-cm-${sfx}`;
    const C_ROLE = `${tag}-custom-${sfx}`;
    const CLUSTER_ROLES = [C_VIEW_PODS, C_VIEW_CM, C_ROLE];
    const IAM = { group: `iam.${P}.io`, version: 'v1alpha2' };
    const WS = `${tag}-ws-${sfx}`;
    const WS_LABEL = `${P}.io/workspace`;
    const W_TPL_VIEW = `${tag}-wtpl-view-${sfx}`;
    const W_TPL_MANAGE = `${tag}-wtpl-manage-${sfx}`;
    const W_BUILT_IN = `${WS}-viewer`;
    const W_ROLE = `${WS}-custom`;
    const G_TPL = `${tag}-gtpl-${sfx}`;
    const G_ROLE = `${tag}-global-${sfx}`;
    const customObject = (
      plural: string,
      kind: string,
      name: string,
      labels: Record<string, string>,
      annotations = {},
    ) =>
      objects.createClusterCustomObject({
        ...IAM,
        plural,
        body: {
          apiVersion: `${IAM.group}/${IAM.version}`,
          kind,
          metadata: { name, labels, annotations },
          rules: [...VIEW_PODS],
        },
      });
    const readObject = async (plural: string, name: string) =>
      (await objects.getClusterCustomObject({ ...IAM, plural, name })) as Role & {
        metadata: { labels?: Record<string, string> };
      };
    let server: ServerProcess;
    const tokens = new Map<string, string>();

    const token = async (user: string) => {
      if (!tokens.has(user)) {
        const login = await passwordLogin(server.url, user, PASSWORD, { id: P, secret: P });
        assert.equal(login.status, 200, JSON.stringify(login.body));
        tokens.set(user, String(login.body['access_token']));
      }
      return tokens.get(user)!;
    };
    const call = async (
      user: string,
      method: string,
      path: string,
      body?: unknown,
      options: { raw?: string; type?: string } = {},
    ): Promise<{ status: number; text: string; json: () => unknown }> => {
      const sending = body !== undefined || options.raw !== undefined;
      const res = await fetch(`${server.url}/kapis/iam.${P}.io/v1alpha2/${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${await token(user)}`,
          ...(sending ? { 'Content-Type': options.type ?? 'application/json' } : {}),
        },
        ...(options.raw !== undefined
          ? { body: options.raw }
          : sending
            ? { body: JSON.stringify(body) }
            : {}),
      });
      const text = await res.text();
      return { status: res.status, text, json: () => JSON.parse(text) as unknown };
    };
    const fails = async (
      res: Promise<{ status: number; text: string; json: () => unknown }>,
      code: number,
      message: RegExp,
    ) => {
      const { status, text, json } = await res;
      assert.equal(status, code, text);
      const body = json() as Status;
      assert.equal(body.kind, 'Status');
      assert.equal(body.code, code);
      assert.match(body.message, message);
    };
    const aggregating = (kind: string, name: string, templates: string[], rules: V1PolicyRule[] = []) => ({
      apiVersion: ['GlobalRole', 'WorkspaceRole'].includes(kind)
        ? `iam.${P}.io/v1alpha2`
        : `${RBAC_GROUP}/v1`,
      kind,
      metadata: { name, annotations: { [AGGREGATION]: JSON.stringify(templates) } },
      rules,
    });

    const cleanup = async () => {
      await server?.stop();
      await rbac.deleteClusterRoleBinding({ name: `${ADMIN}-cluster-admin` }).catch(ignore404);
      for (const name of CLUSTER_ROLES) await rbac.deleteClusterRole({ name }).catch(ignore404);
      await core.deleteNamespace({ name: NS }).catch(ignore404);
      for (const name of [W_TPL_VIEW, W_TPL_MANAGE, W_BUILT_IN, W_ROLE])
        await objects.deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name }).catch(ignore404);
      if (profile.original)
        for (const name of [G_TPL, G_ROLE])
          await objects.deleteClusterCustomObject({ ...IAM, plural: 'globalroles', name }).catch(ignore404);
      await deleteWorkspaces(kc, P, [WS]);
      await deleteUsersAndSessions(kc, USERS, P);
    };

    before(async () => {
      await profile.install(P);
      await cleanup();
      for (const name of USERS)
        await createUser(kc, { name, password: PASSWORD, groups: [], email: `${name}@roles.example` }, P);
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: `${ADMIN}-cluster-admin` },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: ADMIN }],
        },
      });
      for (const [name, rules] of [
        [C_VIEW_PODS, VIEW_PODS],
        [C_VIEW_CM, VIEW_CONFIGMAPS],
      ] as const)
        await rbac.createClusterRole({
          body: { metadata: { name, labels: { [TEMPLATE]: 'true' } }, rules: [...rules] },
        });
      await core.createNamespace({ body: { metadata: { name: NS } } });
      for (const [name, rules] of [
        ['role-template-view-pods', VIEW_PODS],
        ['role-template-view-configmaps', VIEW_CONFIGMAPS],
        ['role-template-manage-pods', ALL_PODS],
      ] as const)
        await rbac.createNamespacedRole({
          namespace: NS,
          body: { metadata: { name, labels: { [TEMPLATE]: 'true' } }, rules: [...rules] },
        });
      // As the tenant reconciler makes a project's default roles: built in.
      await rbac.createNamespacedRole({
        namespace: NS,
        body: {
          metadata: { name: 'viewer', annotations: { [`${P}.io/creator`]: 'system' } },
          rules: VIEW_PODS,
        },
      });
      await rbac.createNamespacedRole({
        namespace: NS,
        body: {
          metadata: { name: 'owner' },
          rules: [
            {
              apiGroups: [RBAC_GROUP],
              resources: ['roles'],
              verbs: ['create', 'update', 'patch', 'delete', 'get', 'list'],
            },
            ...VIEW_PODS,
          ],
        },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: NS,
        body: {
          metadata: { name: `${OWNER}-owner` },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: 'owner' },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: OWNER }],
        },
      });
      await createWorkspace(kc, P, WS);
      await customObject('workspaceroles', 'WorkspaceRole', W_TPL_VIEW, { [TEMPLATE]: 'true' });
      await customObject('workspaceroles', 'WorkspaceRole', W_TPL_MANAGE, { [TEMPLATE]: 'true' });
      await customObject(
        'workspaceroles',
        'WorkspaceRole',
        W_BUILT_IN,
        { [WS_LABEL]: WS },
        { [`${P}.io/creator`]: 'system' },
      );
      if (profile.original) await customObject('globalroles', 'GlobalRole', G_TPL, { [TEMPLATE]: 'true' });
      server = await startReadyServer([
        `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
        `--platformName=${P}`,
        '--auth.addressRequestsPerMinute=0',
        '--leaderElection.enabled=false',
      ]);
    });
    after(cleanup);

    test('a project role aggregating templates gets their rules, computed by the server; replace, patch, delete', async () => {
      const sent = aggregating(
        'Role',
        'pod-reader',
        ['role-template-view-pods', 'role-template-view-configmaps'],
        ALL_PODS, // replaced by the templates' rules
      );
      const made = await call(ADMIN, 'POST', `namespaces/${NS}/roles`, sent);
      assert.equal(made.status, 200, made.text);
      const stored = await rbac.readNamespacedRole({ namespace: NS, name: 'pod-reader' });
      assert.deepEqual(plain(stored.rules), plain([...VIEW_PODS, ...VIEW_CONFIGMAPS]));
      assert.equal((made.json() as Role).metadata.resourceVersion, stored.metadata?.resourceVersion);
      // The same name again.
      await fails(call(ADMIN, 'POST', `namespaces/${NS}/roles`, sent), 409, /pod-reader/);
      // Replace with one template; then a stale resourceVersion is refused.
      const replaced = await call(ADMIN, 'PUT', `namespaces/${NS}/roles/pod-reader`, {
        ...aggregating('Role', 'pod-reader', ['role-template-view-configmaps']),
        metadata: {
          name: 'pod-reader',
          resourceVersion: stored.metadata?.resourceVersion,
          annotations: { [AGGREGATION]: '["role-template-view-configmaps"]' },
        },
      });
      assert.equal(replaced.status, 200, replaced.text);
      assert.deepEqual(plain((replaced.json() as Role).rules), plain(VIEW_CONFIGMAPS));
      await fails(
        call(ADMIN, 'PUT', `namespaces/${NS}/roles/pod-reader`, {
          kind: 'Role',
          metadata: { name: 'pod-reader', resourceVersion: stored.metadata?.resourceVersion },
          rules: [],
        }),
        409,
        /pod-reader/,
      );
      // A merge patch changing the aggregation: the rules follow.
      const patched = await call(
        ADMIN,
        'PATCH',
        `namespaces/${NS}/roles/pod-reader`,
        { metadata: { annotations: { [AGGREGATION]: '["role-template-view-pods"]' }, labels: { x: 'y' } } },
        { type: 'application/merge-patch+json' },
      );
      assert.equal(patched.status, 200, patched.text);
      const after = await rbac.readNamespacedRole({ namespace: NS, name: 'pod-reader' });
      assert.deepEqual(plain(after.rules), plain(VIEW_PODS));
      assert.equal(after.metadata?.labels?.['x'], 'y');
      // An unknown template: 404 naming it, nothing written.
      await fails(
        call(ADMIN, 'POST', `namespaces/${NS}/roles`, aggregating('Role', 'nope', ['role-template-missing'])),
        404,
        /role-template-missing/,
      );
      await assert.rejects(rbac.readNamespacedRole({ namespace: NS, name: 'nope' }));
      const gone = await call(ADMIN, 'DELETE', `namespaces/${NS}/roles/pod-reader`);
      assert.equal(gone.status, 200, gone.text);
      assert.deepEqual(gone.json(), { message: 'success' });
      await assert.rejects(rbac.readNamespacedRole({ namespace: NS, name: 'pod-reader' }));
      await fails(call(ADMIN, 'DELETE', `namespaces/${NS}/roles/pod-reader`), 404, /pod-reader/);
    });

    test('bad input is refused before anything is written', async () => {
      const roles = `namespaces/${NS}/roles`;
      await fails(call(ADMIN, 'POST', roles, undefined, { raw: '{"kind": "Role",' }), 400, /./);
      await fails(call(ADMIN, 'POST', roles, { kind: 'ClusterRole', metadata: { name: 'a' } }), 400, /kind/);
      await fails(
        call(ADMIN, 'POST', roles, { kind: 'Role', metadata: { name: 'Not_DNS' } }),
        400,
        /DNS-1123/,
      );
      await fails(
        call(ADMIN, 'POST', roles, {
          kind: 'Role',
          metadata: { name: 'a', annotations: { [AGGREGATION]: 'x' } },
        }),
        400,
        /aggregation-roles/,
      );
      await fails(
        call(ADMIN, 'POST', roles, {
          metadata: { name: 'big' },
          rules: [{ verbs: ['x'.repeat(300 * 1024)] }],
        }),
        413,
        /./,
      );
      await fails(
        call(ADMIN, 'PUT', `${roles}/one`, { kind: 'Role', metadata: { name: 'other' } }),
        404,
        /one/,
      );
      await fails(
        call(ADMIN, 'POST', `namespaces/${tag}-absent-${sfx}/roles`, { metadata: { name: 'a' } }),
        404,
        /absent/,
      );
      const list = await rbac.listNamespacedRole({ namespace: NS });
      assert.deepEqual(list.items.map((r) => r.metadata?.name).sort(), [
        'owner',
        'role-template-manage-pods',
        'role-template-view-configmaps',
        'role-template-view-pods',
        'viewer',
      ]);
    });

    test('built-in roles are neither changed nor deleted', async () => {
      for (const [name, why] of [
        ['viewer', /creator: system/],
        ['role-template-view-pods', /role template/],
      ] as const) {
        const item = `namespaces/${NS}/roles/${name}`;
        await fails(call(ADMIN, 'PUT', item, { kind: 'Role', metadata: { name }, rules: [] }), 403, why);
        await fails(
          call(
            ADMIN,
            'PATCH',
            item,
            { metadata: { labels: { a: 'b' } } },
            { type: 'application/merge-patch+json' },
          ),
          403,
          why,
        );
        await fails(call(ADMIN, 'DELETE', item), 403, why);
      }
      await fails(call(ADMIN, 'DELETE', 'clusterroles/cluster-admin'), 403, /rbac-defaults/);
      assert.ok(await rbac.readNamespacedRole({ namespace: NS, name: 'viewer' }));
    });

    test('Kubernetes refuses an escalation: a project owner cannot grant what they do not hold', async () => {
      await fails(
        call(
          OWNER,
          'POST',
          `namespaces/${NS}/roles`,
          aggregating('Role', 'pod-admin', ['role-template-manage-pods']),
        ),
        403,
        /attempting to grant RBAC permissions not currently held/,
      );
      await assert.rejects(rbac.readNamespacedRole({ namespace: NS, name: 'pod-admin' }));
      const within = await call(
        OWNER,
        'POST',
        `namespaces/${NS}/roles`,
        aggregating('Role', 'pod-peek', ['role-template-view-pods']),
      );
      assert.equal(within.status, 200, within.text);
      // Without RBAC on ClusterRoles: refused before anything is read.
      await fails(
        call(OWNER, 'POST', 'clusterroles', aggregating('ClusterRole', C_ROLE, [C_VIEW_PODS])),
        403,
        /clusterroles/,
      );
    });

    test('a ClusterRole aggregating cluster templates: create, patch, replace, delete', async () => {
      const made = await call(
        ADMIN,
        'POST',
        'clusterroles',
        aggregating('ClusterRole', C_ROLE, [C_VIEW_PODS, C_VIEW_CM]),
      );
      assert.equal(made.status, 200, made.text);
      const stored = await rbac.readClusterRole({ name: C_ROLE });
      assert.deepEqual(plain(stored.rules), plain([...VIEW_PODS, ...VIEW_CONFIGMAPS]));
      await fails(
        call(ADMIN, 'POST', 'clusterroles', { kind: 'Role', metadata: { name: `${C_ROLE}-x` } }),
        400,
        /kind must be ClusterRole/,
      );
      const patched = await call(
        ADMIN,
        'PATCH',
        `clusterroles/${C_ROLE}`,
        { metadata: { annotations: { [AGGREGATION]: JSON.stringify([C_VIEW_CM]) } } },
        { type: 'application/merge-patch+json' },
      );
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(plain((await rbac.readClusterRole({ name: C_ROLE })).rules), plain(VIEW_CONFIGMAPS));
      const replaced = await call(ADMIN, 'PUT', `clusterroles/${C_ROLE}`, {
        kind: 'ClusterRole',
        metadata: { name: C_ROLE },
        rules: VIEW_PODS,
      });
      assert.equal(replaced.status, 200, replaced.text);
      assert.deepEqual(plain((await rbac.readClusterRole({ name: C_ROLE })).rules), plain(VIEW_PODS));
      await fails(
        call(
          ADMIN,
          'PUT',
          `clusterroles/${C_ROLE}`,
          aggregating('ClusterRole', C_ROLE, [`${tag}-missing-${sfx}`]),
        ),
        404,
        new RegExp(`${tag}-missing-${sfx}`),
      );
      const gone = await call(ADMIN, 'DELETE', `clusterroles/${C_ROLE}`);
      assert.equal(gone.status, 200, gone.text);
      await assert.rejects(rbac.readClusterRole({ name: C_ROLE }));
    });
    test('a WorkspaceRole: authorized as the caller, written by the server with the workspace label; aggregation, patch, delete', async () => {
      const roles = `workspaces/${WS}/workspaceroles`;
      // The owner has no RBAC on WorkspaceRoles: refused before anything is read.
      await fails(
        call(OWNER, 'POST', roles, aggregating('WorkspaceRole', W_ROLE, [W_TPL_VIEW])),
        403,
        /workspaceroles/,
      );
      const made = await call(ADMIN, 'POST', roles, {
        ...aggregating('WorkspaceRole', W_ROLE, [W_TPL_VIEW, W_TPL_MANAGE]),
        metadata: {
          name: W_ROLE,
          labels: { [WS_LABEL]: 'elsewhere' },
          annotations: { [AGGREGATION]: JSON.stringify([W_TPL_VIEW, W_TPL_MANAGE]) },
        },
      });
      assert.equal(made.status, 200, made.text);
      const stored = await readObject('workspaceroles', W_ROLE);
      assert.equal(stored.metadata.labels?.[WS_LABEL], WS);
      assert.deepEqual(plain(stored.rules), plain(VIEW_PODS)); // both templates hold the same rule: once
      await fails(
        call(ADMIN, 'POST', roles, aggregating('WorkspaceRole', W_ROLE, [])),
        409,
        new RegExp(W_ROLE),
      );
      await fails(
        call(ADMIN, 'POST', roles, aggregating('WorkspaceRole', `${W_ROLE}-x`, [`${tag}-wmissing-${sfx}`])),
        404,
        new RegExp(`${tag}-wmissing-${sfx}`),
      );
      await fails(
        call(ADMIN, 'POST', roles, { kind: 'GlobalRole', metadata: { name: 'a' } }),
        400,
        /WorkspaceRole/,
      );
      // Not of this workspace: the templates (no workspace label) are not its roles.
      await fails(call(ADMIN, 'DELETE', `${roles}/${W_TPL_VIEW}`), 404, new RegExp(W_TPL_VIEW));
      await fails(
        call(ADMIN, 'POST', `workspaces/${tag}-nows-${sfx}/workspaceroles`, { metadata: { name: 'a' } }),
        404,
        /nows/,
      );
      const patched = await call(
        ADMIN,
        'PATCH',
        `${roles}/${W_ROLE}`,
        { metadata: { labels: { [WS_LABEL]: null, x: 'y' } } },
        { type: 'application/merge-patch+json' },
      );
      assert.equal(patched.status, 200, patched.text);
      const after = await readObject('workspaceroles', W_ROLE);
      assert.equal(after.metadata.labels?.[WS_LABEL], WS);
      assert.equal(after.metadata.labels?.['x'], 'y');
      await fails(
        call(ADMIN, 'PUT', `${roles}/${W_ROLE}`, {
          kind: 'WorkspaceRole',
          metadata: { name: W_ROLE, resourceVersion: stored.metadata.resourceVersion },
          rules: [],
        }),
        409,
        new RegExp(W_ROLE),
      );
      await fails(call(ADMIN, 'DELETE', `${roles}/${W_BUILT_IN}`), 403, /creator: system/);
      const gone = await call(ADMIN, 'DELETE', `${roles}/${W_ROLE}`);
      assert.equal(gone.status, 200, gone.text);
      await assert.rejects(readObject('workspaceroles', W_ROLE));
    });

    test(
      profile.original
        ? 'a GlobalRole: aggregation, replace, built-in refused, delete'
        : 'GlobalRoles not installed: 404 naming the resource',
      async () => {
        const body = aggregating('GlobalRole', G_ROLE, [G_TPL]);
        if (!profile.original) {
          await fails(
            call(ADMIN, 'POST', 'globalroles', body),
            404,
            new RegExp(`globalroles.iam.${P}.io" is not installed|globalroles.iam.${P}.io is not installed`),
          );
          await fails(call(ADMIN, 'DELETE', `globalroles/${G_ROLE}`), 404, /not installed/);
          return;
        }
        await fails(call(OWNER, 'POST', 'globalroles', body), 403, /globalroles/);
        const made = await call(ADMIN, 'POST', 'globalroles', body);
        assert.equal(made.status, 200, made.text);
        assert.deepEqual(plain((await readObject('globalroles', G_ROLE)).rules), plain(VIEW_PODS));
        const replaced = await call(ADMIN, 'PUT', `globalroles/${G_ROLE}`, {
          kind: 'GlobalRole',
          metadata: { name: G_ROLE },
          rules: [],
        });
        assert.equal(replaced.status, 200, replaced.text);
        assert.deepEqual(plain((await readObject('globalroles', G_ROLE)).rules), []);
        await fails(call(ADMIN, 'DELETE', `globalroles/${G_TPL}`), 403, /role template/);
        const gone = await call(ADMIN, 'DELETE', `globalroles/${G_ROLE}`);
        assert.equal(gone.status, 200, gone.text);
        await assert.rejects(readObject('globalroles', G_ROLE));
      },
    );
  });
}
