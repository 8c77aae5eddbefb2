// The groups of a workspace, their members and their role bindings (issue 33 §1 "Groups"), on a real
// kube-apiserver, in both profiles: the original's CRDs (seed-shaped, under a platform name of this file's
// own) and only our chart's. A membership puts the group in the user's spec.groups, which the server sends
// as a Kubernetes group when it acts as the user: a group's RoleBinding is then in force for its members,
// seen through a real request as the member through the server's proxy.
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
const PASSWORD = 'Groups-Pa55word!';
const RBAC_GROUP = 'rbac.authorization.k8s.io';
const VIEW_PODS: V1PolicyRule[] = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }];

const ignore404 = (err: unknown) => {
  if (!(err instanceof ApiException && err.code === 404)) throw err;
};

interface Status {
  kind: string;
  code: number;
  message: string;
}
interface Named {
  metadata: {
    name: string;
    generateName?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

const profiles = iamProfiles(kc, { original: 'groupsorig', ours: 'groupsbare' });

for (const profile of profiles) {
  describe(`groups: ${profile.title}`, () => {
    const P = profile.platform;
    const tag = P === 'groupsorig' ? 'go' : 'gb';
    const ADMIN = `${tag}-admin-${sfx}`; // Kubernetes cluster-admin
    const LEAD = `${tag}-lead-${sfx}`; // the workspace's admin (its {ws}-admin role), no RBAC rights
    const ALICE = `${tag}-alice-${sfx}`; // a workspace member
    const BOB = `${tag}-bob-${sfx}`; // a workspace member
    const EVE = `${tag}-eve-${sfx}`; // nobody
    const USERS = [ADMIN, LEAD, ALICE, BOB, EVE];
    const WS = `${tag}-ws-${sfx}`;
    const OTHER_WS = `${tag}-other-${sfx}`;
    const NS = `${tag}-ns-${sfx}`;
    const IAM = { group: `iam.${P}.io`, version: 'v1alpha2' };
    const WS_LABEL = `${P}.io/workspace`;
    const GROUP_REF = `iam.${P}.io/group-ref`;
    const PARENT = `iam.${P}.io/group-parent`;
    const WS_ROLES = [`${WS}-admin`, `${WS}-viewer`, `${OTHER_WS}-viewer`];
    let server: ServerProcess;
    const tokens = new Map<string, string>();
    /** Filled by the tests as they go: the names the kube-apiserver generated. */
    const made = { dev: '', backend: '' };

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
      contentType = 'application/json',
    ): Promise<{ status: number; text: string; json: () => unknown }> => {
      const res = await fetch(`${server.url}/kapis/iam.${P}.io/v1alpha2/${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${await token(user)}`,
          ...(body !== undefined ? { 'Content-Type': contentType } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, text, json: () => JSON.parse(text) as unknown };
    };
    const ok = async <T>(res: Promise<{ status: number; text: string; json: () => unknown }>) => {
      const { status, text, json } = await res;
      assert.equal(status, 200, text);
      return json() as T;
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
    const storedGroups = async (user: string) =>
      (
        (await objects.getClusterCustomObject({ ...IAM, plural: 'users', name: user })) as {
          spec?: { groups?: string[] };
        }
      ).spec?.groups ?? [];
    const listed = async (plural: string, selector: string) =>
      (
        (await objects.listClusterCustomObject({ ...IAM, plural, labelSelector: selector })) as {
          items: Named[];
        }
      ).items.map((i) => i.metadata.name);
    /** A real request as the user through the server (its Kubernetes proxy): the status code. */
    const podsAs = async (user: string) =>
      (
        await fetch(`${server.url}/api/v1/namespaces/${NS}/pods`, {
          headers: { Authorization: `Bearer ${await token(user)}` },
        })
      ).status;

    const cleanup = async () => {
      await server?.stop();
      await rbac.deleteClusterRoleBinding({ name: `${ADMIN}-cluster-admin` }).catch(ignore404);
      for (const plural of ['groupbindings', 'groups'])
        for (const ws of [WS, OTHER_WS])
          for (const name of await listed(plural, `${WS_LABEL}=${ws}`).catch(() => []))
            await objects.deleteClusterCustomObject({ ...IAM, plural, name }).catch(ignore404);
      await deleteWorkspaces(kc, P, [WS, OTHER_WS]);
      for (const name of WS_ROLES)
        await objects.deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name }).catch(ignore404);
      await core.deleteNamespace({ name: NS }).catch(ignore404);
      await deleteUsersAndSessions(kc, USERS, P);
    };

    before(async () => {
      await profile.install(P);
      await cleanup();
      for (const name of USERS)
        await createUser(kc, { name, password: PASSWORD, groups: [], email: `${name}@groups.example` }, P);
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: `${ADMIN}-cluster-admin` },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: ADMIN }],
        },
      });
      await createWorkspace(kc, P, WS);
      await createWorkspace(kc, P, OTHER_WS);
      await createWorkspaceNamespace(kc, P, WS, NS);
      for (const name of [ALICE, BOB]) await bindWorkspaceMember(kc, P, WS, { kind: 'User', name });
      for (const name of WS_ROLES)
        await objects.createClusterCustomObject({
          ...IAM,
          plural: 'workspaceroles',
          body: {
            apiVersion: `${IAM.group}/${IAM.version}`,
            kind: 'WorkspaceRole',
            metadata: { name, labels: { [WS_LABEL]: name.startsWith(WS) ? WS : OTHER_WS } },
            rules: [],
          },
        });
      await objects.createClusterCustomObject({
        ...IAM,
        plural: 'workspacerolebindings',
        body: {
          apiVersion: `${IAM.group}/${IAM.version}`,
          kind: 'WorkspaceRoleBinding',
          metadata: { name: `${LEAD}-${WS}-admin`, labels: { [WS_LABEL]: WS } },
          roleRef: { apiGroup: IAM.group, kind: 'WorkspaceRole', name: `${WS}-admin` },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: LEAD }],
        },
      });
      await rbac.createNamespacedRole({
        namespace: NS,
        body: { metadata: { name: 'viewer' }, rules: VIEW_PODS },
      });
      server = await startReadyServer([
        `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
        `--platformName=${P}`,
        '--auth.addressRequestsPerMinute=0',
        '--leaderElection.enabled=false',
      ]);
    });
    after(cleanup);

    test('the workspace admin creates groups as the console does: a generated name, nested, unique in the workspace', async () => {
      const dev = await ok<Named>(
        call(LEAD, 'POST', `workspaces/${WS}/groups`, {
          apiVersion: `iam.${P}.io/v1alpha2`,
          kind: 'Group',
          metadata: { generateName: 'dev', annotations: { [`${P}.io/alias-name`]: 'Developers' } },
        }),
      );
      assert.match(dev.metadata.name, /^dev[a-z0-9]{5}$/);
      assert.equal(dev.metadata.generateName, 'dev');
      assert.equal(dev.metadata.labels?.[WS_LABEL], WS);
      made.dev = dev.metadata.name;
      const backend = await ok<Named>(
        call(LEAD, 'POST', `workspaces/${WS}/groups`, {
          metadata: { generateName: 'backend', labels: { [PARENT]: made.dev } },
        }),
      );
      assert.equal(backend.metadata.labels?.[PARENT], made.dev);
      made.backend = backend.metadata.name;
      // The same name again in this workspace: 409; in another workspace it is another group.
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/groups`, { metadata: { generateName: 'dev' } }),
        409,
        /a group named dev already exists in the workspace/,
      );
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/groups`, { metadata: {} }),
        400,
        /metadata.generateName: Required value/,
      );
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/groups`, {
          metadata: { name: 'system-admins', generateName: 'x' },
        }),
        400,
        /metadata.name is generated/,
      );
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/groups`, {
          metadata: { generateName: 'orphan', labels: { [PARENT]: `nogroup-${sfx}` } },
        }),
        404,
        new RegExp(`groups.iam.${P}.io "nogroup-${sfx}" not found`),
      );
      // Not an admin of the other workspace, nor anyone's without rights.
      await fails(
        call(LEAD, 'POST', `workspaces/${OTHER_WS}/groups`, { metadata: { generateName: 'dev' } }),
        403,
        /groups/,
      );
      await fails(
        call(EVE, 'POST', `workspaces/${WS}/groups`, { metadata: { generateName: 'x' } }),
        403,
        /groups/,
      );
      await fails(
        call(ADMIN, 'POST', `workspaces/nows-${sfx}/groups`, { metadata: { generateName: 'x' } }),
        404,
        new RegExp(`workspacetemplates.tenant.${P}.io "nows-${sfx}" not found`),
      );
      assert.deepEqual((await listed('groups', `${WS_LABEL}=${WS}`)).sort(), [made.backend, made.dev].sort());
    });

    test('members of the workspace read its groups (the v1alpha3 envelope); others do not', async () => {
      const page = await waitFor('both groups listed', async () => {
        const res = await call(ALICE, 'GET', `workspaces/${WS}/groups?sortBy=createTime&limit=-1`);
        if (res.status !== 200) return undefined;
        const body = res.json() as { items: Named[]; totalItems: number };
        return body.totalItems === 2 ? body : undefined;
      });
      assert.deepEqual(page.items.map((g) => g.metadata.name).sort(), [made.backend, made.dev].sort());
      const one = await ok<Named & { kind: string }>(
        call(ALICE, 'GET', `workspaces/${WS}/groups/${made.dev}`),
      );
      assert.equal(one.kind, 'Group');
      const byName = await ok<{ items: Named[] }>(call(ALICE, 'GET', `workspaces/${WS}/groups?name=backend`));
      assert.deepEqual(
        byName.items.map((g) => g.metadata.name),
        [made.backend],
      );
      await fails(call(ADMIN, 'GET', `workspaces/${OTHER_WS}/groups/${made.dev}`), 404, /not found/);
      await fails(call(EVE, 'GET', `workspaces/${WS}/groups`), 403, /groups/);
      await fails(call(ALICE, 'GET', `workspaces/${WS}/groups?limit=0`), 400, /limit/);
    });

    test('PUT and PATCH, with and without the trailing slash: the workspace label stays the server’s', async () => {
      const patched = await ok<Named>(
        call(
          LEAD,
          'PATCH',
          `workspaces/${WS}/groups/${made.dev}/`,
          { metadata: { annotations: { [`${P}.io/alias-name`]: 'Devs' }, labels: { [WS_LABEL]: null } } },
          'application/merge-patch+json',
        ),
      );
      assert.equal(patched.metadata.annotations?.[`${P}.io/alias-name`], 'Devs');
      assert.equal(patched.metadata.labels?.[WS_LABEL], WS);
      for (const suffix of ['', '/']) {
        const current = (await objects.getClusterCustomObject({
          ...IAM,
          plural: 'groups',
          name: made.dev,
        })) as Named;
        const replaced = await ok<Named>(
          call(LEAD, 'PUT', `workspaces/${WS}/groups/${made.dev}${suffix}`, {
            ...current,
            metadata: { ...current.metadata, annotations: { [`${P}.io/alias-name`]: `Devs${suffix}` } },
          }),
        );
        assert.equal(replaced.metadata.annotations?.[`${P}.io/alias-name`], `Devs${suffix}`);
      }
      await fails(
        call(LEAD, 'PUT', `workspaces/${WS}/groups/${made.dev}`, { metadata: { name: made.backend } }),
        400,
        /does not match the name on the URL/,
      );
      // A group cannot become its own descendant's child.
      await fails(
        call(LEAD, 'PATCH', `workspaces/${WS}/groups/${made.dev}`, {
          metadata: { labels: { [PARENT]: made.backend } },
        }),
        400,
        /cannot be the parent/,
      );
    });

    test('adding users to groups makes the group theirs (spec.groups), so its project role binding is in force', async () => {
      assert.equal(await podsAs(ALICE), 403);
      const bindings = await ok<(Named & { users: string[]; groupRef: { name: string } })[]>(
        call(LEAD, 'POST', `workspaces/${WS}/groupbindings`, [
          { userName: ALICE, groupName: made.dev },
          { userName: BOB, groupName: made.backend },
        ]),
      );
      assert.equal(bindings.length, 2);
      assert.deepEqual(bindings[0]!.users, [ALICE]);
      assert.equal(bindings[0]!.groupRef.name, made.dev);
      assert.match(bindings[0]!.metadata.name, new RegExp(`^${made.dev}-${ALICE}-`));
      assert.equal(bindings[0]!.metadata.labels?.[GROUP_REF], made.dev);
      assert.equal(bindings[0]!.metadata.labels?.[`iam.${P}.io/user-ref`], ALICE);
      assert.deepEqual(await storedGroups(ALICE), [made.dev]);
      assert.deepEqual(await storedGroups(BOB), [made.backend]);
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/groupbindings`, [{ userName: ALICE, groupName: made.dev }]),
        409,
        /already a member/,
      );
      // An unknown user or group: 404, and the valid member beside them is not added.
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/groupbindings`, [
          { userName: EVE, groupName: made.dev },
          { userName: `nobody-${sfx}`, groupName: made.dev },
        ]),
        404,
        new RegExp(`users.iam.${P}.io "nobody-${sfx}" not found`),
      );
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/groupbindings`, [
          { userName: EVE, groupName: `nogroup-${sfx}` },
        ]),
        404,
        /not found/,
      );
      assert.deepEqual(await storedGroups(EVE), []);
      const members = await waitFor('the binding listed', async () => {
        const res = await call(
          ALICE,
          'GET',
          `workspaces/${WS}/groupbindings?labelSelector=${GROUP_REF}=${made.dev}`,
        );
        const body = res.json() as { items: Named[]; totalItems: number };
        return res.status === 200 && body.totalItems === 1 ? body : undefined;
      });
      assert.equal(members.items[0]!.metadata.name, bindings[0]!.metadata.name);

      // The group's role in the project, as the console writes it: a RoleBinding made as the caller.
      const made2 = await ok<Named[]>(
        call(ADMIN, 'POST', `namespaces/${NS}/rolebindings`, [
          {
            subjects: [{ kind: 'Group', apiGroup: RBAC_GROUP, name: made.dev }],
            roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: 'viewer' },
          },
        ]),
      );
      assert.match(made2[0]!.metadata.name, new RegExp(`^${made.dev}-viewer-`));
      assert.equal(made2[0]!.metadata.labels?.[GROUP_REF], made.dev);
      await waitFor('Alice reads pods through her group', async () =>
        (await podsAs(ALICE)) === 200 ? true : undefined,
      );
      assert.equal(await podsAs(BOB), 403);
      // The workspace admin holds no rights in the project: Kubernetes RBAC decides, before anything is written.
      await fails(
        call(LEAD, 'POST', `namespaces/${NS}/rolebindings`, [
          { subjects: [{ kind: 'Group', name: made.backend }], roleRef: { kind: 'Role', name: 'viewer' } },
        ]),
        403,
        /rolebindings/,
      );
      // A group the platform does not manage cannot be bound.
      await fails(
        call(ADMIN, 'POST', `namespaces/${NS}/rolebindings`, [
          {
            subjects: [{ kind: 'Group', name: 'system:authenticated' }],
            roleRef: { kind: 'Role', name: 'viewer' },
          },
        ]),
        400,
        /subjects\[0\]\.name must be a DNS-1123 subdomain.*system:authenticated/,
      );
      const projectBindings = await waitFor('the project binding listed', async () => {
        const res = await call(
          ADMIN,
          'GET',
          `workspaces/${WS}/rolebindings?labelSelector=${GROUP_REF}=${made.dev}`,
        );
        const body = res.json() as Named[];
        return res.status === 200 && body.length === 1 ? body : undefined;
      });
      assert.equal(projectBindings[0]!.metadata.name, made2[0]!.metadata.name);
      // The workspace's admin sees the workspace, but RBAC lets them list no RoleBindings in the project.
      assert.deepEqual(await ok(call(LEAD, 'GET', `workspaces/${WS}/rolebindings`)), []);
      await fails(call(EVE, 'GET', `workspaces/${WS}/rolebindings`), 403, /rolebindings/);
    });

    test('a group’s workspace role: WorkspaceRoleBindings of the workspace', async () => {
      const template = (group: string, role: string) => ({
        kind: 'WorkspaceRoleBinding',
        apiVersion: `iam.${P}.io/v1alpha2`,
        subjects: [{ kind: 'Group', apiGroup: RBAC_GROUP, name: group }],
        roleRef: { apiGroup: `iam.${P}.io/v1alpha2`, kind: 'WorkspaceRole', name: role },
      });
      const made3 = await ok<(Named & { roleRef: { name: string } })[]>(
        call(LEAD, 'POST', `workspaces/${WS}/workspacerolebindings`, [template(made.dev, `${WS}-viewer`)]),
      );
      assert.equal(made3[0]!.metadata.labels?.[GROUP_REF], made.dev);
      assert.equal(made3[0]!.metadata.labels?.[WS_LABEL], WS);
      assert.equal(made3[0]!.roleRef.name, `${WS}-viewer`);
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/workspacerolebindings`, [template(made.dev, `${WS}-viewer`)]),
        409,
        /already bound/,
      );
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/workspacerolebindings`, [
          template(made.dev, `${OTHER_WS}-viewer`),
        ]),
        404,
        new RegExp(`workspaceroles.iam.${P}.io "${OTHER_WS}-viewer" not found`),
      );
      await fails(
        call(LEAD, 'POST', `workspaces/${WS}/workspacerolebindings`, [
          template('system:masters', `${WS}-admin`),
        ]),
        400,
        /system:masters/,
      );
      const list = await waitFor('the workspace binding listed', async () => {
        const res = await call(
          ALICE,
          'GET',
          `workspaces/${WS}/workspacerolebindings?labelSelector=${GROUP_REF}=${made.dev}`,
        );
        const body = res.json() as { items: Named[]; totalItems: number };
        return res.status === 200 && body.totalItems === 1 ? body : undefined;
      });
      assert.equal(list.items[0]!.metadata.name, made3[0]!.metadata.name);
      await fails(
        call(EVE, 'DELETE', `workspaces/${WS}/workspacerolebindings/${made3[0]!.metadata.name}`),
        403,
        /workspacerolebindings/,
      );
      await fails(
        call(ADMIN, 'DELETE', `workspaces/${OTHER_WS}/workspacerolebindings/${made3[0]!.metadata.name}`),
        404,
        /not found/,
      );
    });

    test('removing a member takes the group from them: their access through it ends', async () => {
      const [binding] = await listed('groupbindings', `${GROUP_REF}=${made.dev}`);
      await fails(call(EVE, 'DELETE', `workspaces/${WS}/groupbindings/${binding}`), 403, /groupbindings/);
      await fails(
        call(LEAD, 'DELETE', `workspaces/${OTHER_WS}/groupbindings/${binding}`),
        403,
        /groupbindings/,
      );
      const res = await ok<{ message: string }>(
        call(LEAD, 'DELETE', `workspaces/${WS}/groupbindings/${binding}`),
      );
      assert.deepEqual(res, { message: 'success' });
      assert.deepEqual(await storedGroups(ALICE), []);
      assert.deepEqual(await listed('groupbindings', `${GROUP_REF}=${made.dev}`), []);
      await waitFor('Alice no longer reads pods', async () =>
        (await podsAs(ALICE)) === 403 ? true : undefined,
      );
      await fails(call(LEAD, 'DELETE', `workspaces/${WS}/groupbindings/${binding}`), 404, /not found/);
    });

    test('deleting a group deletes its subgroups, their memberships and their role bindings', async () => {
      await ok(
        call(LEAD, 'POST', `workspaces/${WS}/groupbindings`, [{ userName: ALICE, groupName: made.dev }]),
      );
      await ok(
        call(ADMIN, 'POST', `namespaces/${NS}/rolebindings`, [
          { subjects: [{ kind: 'Group', name: made.backend }], roleRef: { kind: 'Role', name: 'viewer' } },
        ]),
      );
      const res = await ok<{ message: string }>(call(LEAD, 'DELETE', `workspaces/${WS}/groups/${made.dev}`));
      assert.deepEqual(res, { message: 'success' });
      assert.deepEqual(await listed('groups', `${WS_LABEL}=${WS}`), []);
      assert.deepEqual(await listed('groupbindings', `${WS_LABEL}=${WS}`), []);
      assert.deepEqual(await storedGroups(ALICE), []);
      assert.deepEqual(await storedGroups(BOB), []);
      assert.deepEqual(await listed('workspacerolebindings', `${WS_LABEL}=${WS},${GROUP_REF}`), []);
      const left = await rbac.listNamespacedRoleBinding({ namespace: NS, labelSelector: GROUP_REF });
      assert.deepEqual(left.items, []);
      await fails(call(LEAD, 'DELETE', `workspaces/${WS}/groups/${made.dev}`), 404, /not found/);
    });

    test('the project RoleBinding delete is made as the caller', async () => {
      const [binding] = await ok<Named[]>(
        call(ADMIN, 'POST', `namespaces/${NS}/rolebindings`, [
          { subjects: [{ kind: 'User', name: BOB }], roleRef: { kind: 'Role', name: 'viewer' } },
        ]),
      );
      assert.equal(binding!.metadata.labels?.[`iam.${P}.io/user-ref`], BOB);
      await fails(
        call(LEAD, 'DELETE', `namespaces/${NS}/rolebindings/${binding!.metadata.name}`),
        403,
        /rolebindings/,
      );
      await ok(call(ADMIN, 'DELETE', `namespaces/${NS}/rolebindings/${binding!.metadata.name}`));
      await fails(
        call(ADMIN, 'DELETE', `namespaces/${NS}/rolebindings/${binding!.metadata.name}`),
        404,
        /not found/,
      );
    });

    test('a deleted user’s group memberships go with them', async () => {
      const qa = await ok<Named>(
        call(LEAD, 'POST', `workspaces/${WS}/groups`, { metadata: { generateName: 'qa' } }),
      );
      await ok(
        call(LEAD, 'POST', `workspaces/${WS}/groupbindings`, [
          { userName: EVE, groupName: qa.metadata.name },
        ]),
      );
      assert.deepEqual(await storedGroups(EVE), [qa.metadata.name]);
      await ok(call(ADMIN, 'DELETE', `users/${EVE}`));
      assert.deepEqual(await listed('groupbindings', `iam.${P}.io/user-ref=${EVE}`), []);
    });

    test('DevOps projects are not served: every devops route is a 404 saying so', async () => {
      for (const [method, path] of [
        ['GET', 'devops/p1/members'],
        ['POST', 'devops/p1/members'],
        ['PUT', 'devops/p1/members/m'],
        ['DELETE', 'devops/p1/roles/r'],
        ['PATCH', 'devops/p1/roles/r'],
        ['GET', 'devops/p1/members/m/roles'],
      ] as const)
        await fails(call(ADMIN, method, path), 404, /DevOps projects are not served/);
    });
  });
}
