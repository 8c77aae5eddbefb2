// Inviting, re-roling and removing the members of a project and of the cluster (issue 33 §1 "Members"),
// on a real kube-apiserver, in both profiles: the original's CRDs (seed-shaped, under a platform name of
// this file's own) and only our chart's. The writes are Kubernetes RBAC bindings made as the caller, so
// Kubernetes decides them (escalation refused) and they are in force at once: a SubjectAccessReview as
// the member and a real request as the member through the server say so.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ApiException,
  AuthorizationV1Api,
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
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import { iamProfiles } from '../support/iam-profiles.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import {
  bindWorkspaceMember,
  createWorkspace,
  createWorkspaceNamespace,
  deleteWorkspaces,
} from '../support/tenant-fixtures.ts';

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const objects = kc.makeApiClient(CustomObjectsApi);
const core = kc.makeApiClient(CoreV1Api);
const sfx = randomBytes(3).toString('hex');
const PASSWORD = 'Members-Pa55word!';
const RBAC_GROUP = 'rbac.authorization.k8s.io';

const ignore404 = (err: unknown) => {
  if (!(err instanceof ApiException && err.code === 404)) throw err;
};

interface Status {
  kind: string;
  code: number;
  message: string;
}

/** May `user` do `verb` on `resource` (in `namespace`)? Kubernetes RBAC answers. */
async function allowed(user: string, verb: string, resource: string, namespace?: string) {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: { spec: { user, resourceAttributes: { verb, resource, ...(namespace ? { namespace } : {}) } } },
  });
  return review.status?.allowed === true;
}

const VIEW_PODS: V1PolicyRule[] = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }];
const ALL_PODS: V1PolicyRule[] = [{ apiGroups: [''], resources: ['pods'], verbs: ['*'] }];

const profiles = iamProfiles(kc, { original: 'memberwrites', ours: 'memberwritesbare' });

for (const profile of profiles) {
  describe(`members written: ${profile.title}`, () => {
    const P = profile.platform;
    const tag = P === 'memberwrites' ? 'mw' : 'mwb';
    const ADMIN = `${tag}-admin-${sfx}`; // Kubernetes cluster-admin
    const OWNER = `${tag}-owner-${sfx}`; // may bind in the project, holds only the viewer's rules
    const DAVE = `${tag}-dave-${sfx}`; // a workspace member, invited
    const CAROL = `${tag}-carol-${sfx}`; // a workspace member
    const EVE = `${tag}-eve-${sfx}`; // not a member of the workspace
    const USERS = [ADMIN, OWNER, DAVE, CAROL, EVE];
    const WS = `${tag}-ws-${sfx}`;
    const NS = `${tag}-ns-${sfx}`;
    const CLUSTER_VIEW = `${tag}-cluster-view-${sfx}`;
    const CLUSTER_EDIT = `${tag}-cluster-edit-${sfx}`;
    const USER_REF = `iam.${P}.io/user-ref`;
    const IAM = { group: `iam.${P}.io`, version: 'v1alpha2' };
    const WS_LABEL = `${P}.io/workspace`;
    const WS_ROLES = [`${WS}-admin`, `${WS}-viewer`, `${tag}-elsewhere-${sfx}-viewer`];
    /** The user's WorkspaceRoleBindings, by name → role. */
    const workspaceBindings = async (user: string) => {
      const list = (await objects.listClusterCustomObject({
        ...IAM,
        plural: 'workspacerolebindings',
        labelSelector: `${WS_LABEL}=${WS}`,
      })) as {
        items: {
          metadata: { name: string };
          roleRef: { name: string };
          subjects?: { kind: string; name: string }[];
        }[];
      };
      return Object.fromEntries(
        list.items
          .filter((b) => b.subjects?.some((s) => s.kind === 'User' && s.name === user))
          .map((b) => [b.metadata.name, b.roleRef.name]),
      );
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
      raw?: string,
    ): Promise<{ status: number; text: string; json: () => unknown }> => {
      const res = await fetch(`${server.url}/kapis/iam.${P}.io/v1alpha2/${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${await token(user)}`,
          ...(body !== undefined || raw !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
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
    /** The role a member is listed with at a scope (its `iam.<p>.io/<annotation>`), read once. */
    const roleListed = async (path: string, annotation: string): Promise<string | undefined> => {
      const member = await call(ADMIN, 'GET', path);
      assert.equal(member.status, 200, member.text);
      const { metadata } = member.json() as { metadata: { annotations?: Record<string, string> } };
      return metadata.annotations?.[`iam.${P}.io/${annotation}`];
    };
    /** The user's RoleBindings in the project, by name → role. */
    const projectBindings = async (user: string) => {
      const list = await rbac.listNamespacedRoleBinding({ namespace: NS });
      return Object.fromEntries(
        list.items
          .filter((b) => b.subjects?.some((s) => s.kind === 'User' && s.name === user))
          .map((b) => [b.metadata!.name!, b.roleRef.name]),
      );
    };
    const clusterBindings = async (user: string) => {
      const list = await rbac.listClusterRoleBinding();
      return Object.fromEntries(
        list.items
          .filter((b) => b.subjects?.some((s) => s.kind === 'User' && s.name === user))
          .map((b) => [b.metadata!.name!, b.roleRef.name]),
      );
    };
    /** A real request as the user through the server (its Kubernetes proxy): the status code. */
    const podsAs = async (user: string) =>
      (
        await fetch(`${server.url}/api/v1/namespaces/${NS}/pods`, {
          headers: { Authorization: `Bearer ${await token(user)}` },
        })
      ).status;

    const cleanup = async () => {
      await server?.stop();
      for (const user of USERS)
        for (const name of Object.keys(await clusterBindings(user)))
          await rbac.deleteClusterRoleBinding({ name }).catch(ignore404);
      for (const name of [CLUSTER_VIEW, CLUSTER_EDIT])
        await rbac.deleteClusterRole({ name }).catch(ignore404);
      await deleteWorkspaces(kc, P, [WS]);
      for (const name of WS_ROLES)
        await objects.deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name }).catch(ignore404);
      await core.deleteNamespace({ name: NS }).catch(ignore404);
      await deleteUsersAndSessions(kc, USERS, P);
    };

    before(async () => {
      await profile.install(P);
      await cleanup();
      for (const name of USERS)
        await createUser(kc, { name, password: PASSWORD, groups: [], email: `${name}@members.example` }, P);
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: `${ADMIN}-cluster-admin` },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: ADMIN }],
        },
      });
      await rbac.createClusterRole({ body: { metadata: { name: CLUSTER_VIEW }, rules: VIEW_PODS } });
      await rbac.createClusterRole({ body: { metadata: { name: CLUSTER_EDIT }, rules: ALL_PODS } });
      await createWorkspace(kc, P, WS);
      await createWorkspaceNamespace(kc, P, WS, NS);
      for (const name of [DAVE, CAROL, OWNER]) await bindWorkspaceMember(kc, P, WS, { kind: 'User', name });
      // The project's roles as the tenant reconciler makes them (it is off here: exactly these roles).
      for (const name of WS_ROLES)
        await objects.createClusterCustomObject({
          ...IAM,
          plural: 'workspaceroles',
          body: {
            apiVersion: `${IAM.group}/${IAM.version}`,
            kind: 'WorkspaceRole',
            metadata: { name, labels: { [WS_LABEL]: name.startsWith(WS) ? WS : `${tag}-elsewhere-${sfx}` } },
            rules: [],
          },
        });
      for (const [name, rules] of [
        ['viewer', VIEW_PODS],
        ['operator', ALL_PODS],
      ] as const)
        await rbac.createNamespacedRole({ namespace: NS, body: { metadata: { name }, rules: [...rules] } });
      // The owner may write bindings in the project and holds the viewer's rules, not the operator's.
      await rbac.createNamespacedRole({
        namespace: NS,
        body: {
          metadata: { name: 'owner' },
          rules: [
            {
              apiGroups: [RBAC_GROUP],
              resources: ['rolebindings'],
              verbs: ['create', 'update', 'delete', 'list'],
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
      server = await startReadyServer([
        `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
        `--platformName=${P}`,
        '--auth.addressRequestsPerMinute=0',
        '--leaderElection.enabled=false',
      ]);
    });
    after(cleanup);

    test('a project invite binds the member as the original names it, in force at once', async () => {
      assert.equal(await allowed(DAVE, 'list', 'pods', NS), false);
      assert.equal(await podsAs(DAVE), 403);
      const res = await call(ADMIN, 'POST', `namespaces/${NS}/members`, [
        { username: DAVE, roleRef: 'viewer' },
      ]);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json(), [{ username: DAVE, roleRef: 'viewer' }]);
      const binding = await rbac.readNamespacedRoleBinding({ namespace: NS, name: `${DAVE}-viewer` });
      assert.equal(binding.metadata?.labels?.[USER_REF], DAVE);
      assert.deepEqual({ ...binding.roleRef }, { apiGroup: RBAC_GROUP, kind: 'Role', name: 'viewer' });
      assert.deepEqual(
        binding.subjects?.map((s) => ({ ...s })),
        [{ kind: 'User', apiGroup: RBAC_GROUP, name: DAVE }],
      );
      assert.equal(await allowed(DAVE, 'list', 'pods', NS), true);
      assert.equal(await podsAs(DAVE), 200);
      // The member list shows them with that role (its cache follows the binding's watch event).
      await waitFor('Dave listed as viewer', async () => {
        const member = await call(ADMIN, 'GET', `namespaces/${NS}/members/${DAVE}`);
        if (member.status !== 200) return undefined;
        const annotations = (member.json() as { metadata: { annotations: Record<string, string> } }).metadata
          .annotations;
        return annotations[`iam.${P}.io/role`] === 'viewer' ? true : undefined;
      });
    });

    test('changing the role replaces the binding; the same role again changes nothing', async () => {
      const res = await call(ADMIN, 'PUT', `namespaces/${NS}/members/${DAVE}`, {
        username: DAVE,
        roleRef: 'operator',
      });
      assert.equal(res.status, 200, res.text);
      // Read right after the answer (as the console lists members after its dialog), the member shows
      // the new role: the write waited for the cache the lists read.
      assert.equal(await roleListed(`namespaces/${NS}/members/${DAVE}`, 'role'), 'operator');
      assert.deepEqual(await projectBindings(DAVE), { [`${DAVE}-operator`]: 'operator' });
      assert.equal(await allowed(DAVE, 'delete', 'pods', NS), true);
      const again = await call(ADMIN, 'PUT', `namespaces/${NS}/members/${DAVE}`, {
        username: DAVE,
        roleRef: 'operator',
      });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(await projectBindings(DAVE), { [`${DAVE}-operator`]: 'operator' });
      await fails(
        call(ADMIN, 'PUT', `namespaces/${NS}/members/${DAVE}`, { username: CAROL, roleRef: 'viewer' }),
        400,
        new RegExp(`the name of the object \\(${CAROL}\\) does not match the name on the URL \\(${DAVE}\\)`),
      );
    });

    test('escalation is refused by Kubernetes, and a refused list writes nothing', async () => {
      // The owner may bind the viewer role (they hold its rules)…
      const ok = await call(OWNER, 'POST', `namespaces/${NS}/members`, [
        { username: CAROL, roleRef: 'viewer' },
      ]);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(await projectBindings(CAROL), { [`${CAROL}-viewer`]: 'viewer' });
      // …not the operator role: Kubernetes refuses, and Carol's role change in the same list is not made.
      await fails(
        call(OWNER, 'POST', `namespaces/${NS}/members`, [
          { username: CAROL, roleRef: 'viewer' },
          { username: OWNER, roleRef: 'operator' },
        ]),
        403,
        /no member was added: binding .*-owner-.* to operator: .*attempting to grant RBAC permissions not currently held/,
      );
      await fails(
        call(OWNER, 'PUT', `namespaces/${NS}/members/${CAROL}`, { username: CAROL, roleRef: 'operator' }),
        403,
        /attempting to grant RBAC permissions not currently held/,
      );
      assert.deepEqual(await projectBindings(CAROL), { [`${CAROL}-viewer`]: 'viewer' });
      assert.deepEqual(await projectBindings(OWNER), { [`${OWNER}-owner`]: 'owner' });
      // A user not in the workspace is named; the valid member beside them is not added either.
      await fails(
        call(ADMIN, 'POST', `namespaces/${NS}/members`, [
          { username: CAROL, roleRef: 'operator' },
          { username: EVE, roleRef: 'viewer' },
        ]),
        400,
        new RegExp(`user "${EVE}" is not a member of workspace "${WS}".*no member was added`),
      );
      assert.deepEqual(await projectBindings(CAROL), { [`${CAROL}-viewer`]: 'viewer' });
      assert.deepEqual(await projectBindings(EVE), {});
      // Without the right to write bindings at all: 403 before anything is looked up.
      await fails(
        call(EVE, 'POST', `namespaces/${NS}/members`, [{ username: EVE, roleRef: 'viewer' }]),
        403,
        /rolebindings/,
      );
    });

    test('unknown users, roles and namespaces are 404 naming them; bad bodies are refused', async () => {
      const invite = (body: unknown) => call(ADMIN, 'POST', `namespaces/${NS}/members`, body);
      await fails(
        invite([{ username: `nobody-${sfx}`, roleRef: 'viewer' }]),
        404,
        new RegExp(`users.iam.${P}.io "nobody-${sfx}" not found`),
      );
      await fails(
        invite([{ username: CAROL, roleRef: 'no-such-role' }]),
        404,
        /roles.rbac.authorization.k8s.io "no-such-role" not found/,
      );
      await fails(
        call(ADMIN, 'POST', `namespaces/no-such-ns-${sfx}/members`, [{ username: CAROL, roleRef: 'viewer' }]),
        404,
        new RegExp(`namespaces "no-such-ns-${sfx}" not found`),
      );
      await fails(
        call(ADMIN, 'POST', `namespaces/${NS}/members`, undefined, '[{"username": '),
        400,
        /JSON|json/,
      );
      await fails(invite({ username: CAROL, roleRef: 'viewer' }), 400, /must be a JSON list/);
      await fails(invite([{ username: CAROL }]), 400, /\[0\]\.roleRef must be a non-empty string/);
      await fails(
        invite([
          { username: CAROL, roleRef: 'viewer' },
          { username: CAROL, roleRef: 'viewer' },
        ]),
        400,
        /more than once/,
      );
      const huge = [{ username: 'x'.repeat(300 * 1024), roleRef: 'viewer' }];
      await fails(invite(huge), 413, /too large|limit/i);
      assert.deepEqual(await projectBindings(CAROL), { [`${CAROL}-viewer`]: 'viewer' });
    });

    test('removing a member deletes their bindings there: their access ends at once', async () => {
      assert.equal(await podsAs(DAVE), 200);
      const res = await call(ADMIN, 'DELETE', `namespaces/${NS}/members/${DAVE}`);
      assert.equal(res.status, 200, res.text);
      assert.equal((await call(ADMIN, 'GET', `namespaces/${NS}/members/${DAVE}`)).status, 404);
      assert.deepEqual(res.json(), { message: 'success' });
      assert.deepEqual(await projectBindings(DAVE), {});
      assert.equal(await allowed(DAVE, 'list', 'pods', NS), false);
      assert.equal(await podsAs(DAVE), 403);
      await fails(
        call(ADMIN, 'DELETE', `namespaces/${NS}/members/${DAVE}`),
        404,
        /is not a member of namespace/,
      );
      await fails(call(ADMIN, 'DELETE', `namespaces/${NS}/members/nobody-${sfx}`), 404, /not found/);
      await fails(call(EVE, 'DELETE', `namespaces/${NS}/members/${CAROL}`), 403, /rolebindings/);
      assert.deepEqual(await projectBindings(CAROL), { [`${CAROL}-viewer`]: 'viewer' });
    });

    test('cluster members: ClusterRoleBindings, the same rules', async () => {
      const res = await call(ADMIN, 'POST', 'clustermembers', [{ username: DAVE, roleRef: CLUSTER_VIEW }]);
      assert.equal(res.status, 200, res.text);
      const binding = await rbac.readClusterRoleBinding({ name: `${DAVE}-${CLUSTER_VIEW}` });
      assert.equal(binding.metadata?.labels?.[USER_REF], DAVE);
      assert.deepEqual(
        { ...binding.roleRef },
        { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: CLUSTER_VIEW },
      );
      assert.equal(await allowed(DAVE, 'list', 'pods'), true);
      assert.equal(await podsAs(DAVE), 200);
      const changed = await call(ADMIN, 'PUT', `clustermembers/${DAVE}`, {
        username: DAVE,
        roleRef: CLUSTER_EDIT,
      });
      assert.equal(changed.status, 200, changed.text);
      assert.deepEqual(await clusterBindings(DAVE), { [`${DAVE}-${CLUSTER_EDIT}`]: CLUSTER_EDIT });
      // The owner may not write ClusterRoleBindings at all.
      await fails(
        call(OWNER, 'POST', 'clustermembers', [{ username: CAROL, roleRef: CLUSTER_VIEW }]),
        403,
        /clusterrolebindings/,
      );
      await fails(
        call(ADMIN, 'POST', 'clustermembers', [{ username: CAROL, roleRef: `nope-${sfx}` }]),
        404,
        new RegExp(`clusterroles.rbac.authorization.k8s.io "nope-${sfx}" not found`),
      );
      const removed = await call(ADMIN, 'DELETE', `clustermembers/${DAVE}`);
      assert.equal(removed.status, 200, removed.text);
      assert.deepEqual(await clusterBindings(DAVE), {});
      assert.equal(await allowed(DAVE, 'list', 'pods'), false);
      assert.equal(await podsAs(DAVE), 403);
    });
    test('workspace members: WorkspaceRoleBindings, by RBAC or by the workspace’s admin; removal ends project access', async () => {
      const path = `workspaces/${WS}/workspacemembers`;
      // Eve, outside the workspace, is invited as its viewer, and can then join its project.
      assert.equal((await call(EVE, 'GET', path)).status, 403);
      const res = await call(ADMIN, 'POST', path, [{ username: EVE, roleRef: `${WS}-viewer` }]);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json(), [{ username: EVE, roleRef: `${WS}-viewer` }]);
      const binding = (await objects.getClusterCustomObject({
        ...IAM,
        plural: 'workspacerolebindings',
        name: `${EVE}-${WS}-viewer`,
      })) as { metadata: { labels: Record<string, string> }; roleRef: unknown; subjects: unknown };
      assert.equal(binding.metadata.labels[USER_REF], EVE);
      assert.equal(binding.metadata.labels[WS_LABEL], WS);
      assert.deepEqual(binding.roleRef, { apiGroup: IAM.group, kind: 'WorkspaceRole', name: `${WS}-viewer` });
      assert.deepEqual(binding.subjects, [{ kind: 'User', apiGroup: RBAC_GROUP, name: EVE }]);
      // In force: Eve now sees the workspace (its members, through the server) as its member.
      await waitFor('Eve sees the workspace', async () =>
        (await call(EVE, 'GET', path)).status === 200 ? true : undefined,
      );
      const joined = await call(ADMIN, 'POST', `namespaces/${NS}/members`, [
        { username: EVE, roleRef: 'viewer' },
      ]);
      assert.equal(joined.status, 200, joined.text);
      assert.equal(await allowed(EVE, 'list', 'pods', NS), true);

      // Made the workspace's admin, Eve (no RBAC on WorkspaceRoleBindings) manages its members.
      const promoted = await call(ADMIN, 'PUT', `${path}/${EVE}`, { username: EVE, roleRef: `${WS}-admin` });
      assert.equal(promoted.status, 200, promoted.text);
      assert.equal(await roleListed(`${path}/${EVE}`, 'workspacerole'), `${WS}-admin`);
      assert.deepEqual(await workspaceBindings(EVE), { [`${EVE}-${WS}-admin`]: `${WS}-admin` });
      const byAdmin = await call(EVE, 'PUT', `${path}/${CAROL}`, { username: CAROL, roleRef: `${WS}-admin` });
      assert.equal(byAdmin.status, 200, byAdmin.text);
      assert.deepEqual(await workspaceBindings(CAROL), { [`${CAROL}-${WS}-admin`]: `${WS}-admin` });
      // A viewer of the workspace without RBAC may not.
      await fails(
        call(OWNER, 'POST', path, [{ username: DAVE, roleRef: `${WS}-admin` }]),
        403,
        /workspacerolebindings/,
      );
      await fails(call(OWNER, 'DELETE', `${path}/${CAROL}`), 403, /workspacerolebindings/);

      // Unknown names are 404 naming them; a role of another workspace is unknown here.
      await fails(
        call(ADMIN, 'POST', path, [{ username: DAVE, roleRef: `${tag}-elsewhere-${sfx}-viewer` }]),
        404,
        new RegExp(`workspaceroles.iam.${P}.io "${tag}-elsewhere-${sfx}-viewer" not found`),
      );
      await fails(
        call(ADMIN, 'POST', path, [{ username: `nobody-${sfx}`, roleRef: `${WS}-viewer` }]),
        404,
        new RegExp(`users.iam.${P}.io "nobody-${sfx}" not found`),
      );
      await fails(
        call(ADMIN, 'POST', `workspaces/nows-${sfx}/workspacemembers`, [
          { username: DAVE, roleRef: `${WS}-viewer` },
        ]),
        404,
        new RegExp(`workspacetemplates.tenant.${P}.io "nows-${sfx}" not found`),
      );
      await fails(call(ADMIN, 'POST', path, { username: DAVE }), 400, /must be a JSON list/);

      // Removed from the workspace, Eve loses her project binding too: her access there ends.
      const removed = await call(CAROL, 'DELETE', `${path}/${EVE}`);
      assert.equal(removed.status, 200, removed.text);
      assert.deepEqual(await workspaceBindings(EVE), {});
      assert.deepEqual(await projectBindings(EVE), {});
      assert.equal(await allowed(EVE, 'list', 'pods', NS), false);
      assert.equal(await podsAs(EVE), 403);
      await waitFor('Eve no longer sees the workspace', async () =>
        (await call(EVE, 'GET', path)).status === 403 ? true : undefined,
      );
      await fails(
        call(ADMIN, 'DELETE', `${path}/${EVE}`),
        404,
        new RegExp(`is not a member of workspace "${WS}"`),
      );
      // Carol's project binding is untouched.
      assert.deepEqual(await projectBindings(CAROL), { [`${CAROL}-viewer`]: 'viewer' });
    });
  });
}
