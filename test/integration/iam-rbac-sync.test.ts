// What the platform grants is in force (issue 33 §2), on a real kube-apiserver through the real server, in
// both profiles: the original's CRDs (seed-shaped, under a platform name of this file's own) and only our
// chart's. The RBAC reconciler turns GlobalRoles, WorkspaceRoles and their bindings into Kubernetes RBAC:
// a workspace admin invited through the IAM API creates Deployments in every project of the workspace (as
// impersonated user through the server's proxy, and with kubectl through it), nothing elsewhere, until
// removed. Generated objects go with their source and are repaired when edited; role aggregation follows
// its templates; writes that would grant what the caller does not hold are refused (403, nothing
// written). Then two servers: the leader killed with SIGKILL, the other takes over.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import {
  ApiException,
  AuthorizationV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';
import { Agent, setGlobalDispatcher } from 'undici';
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
import { iamProfiles } from '../support/iam-profiles.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { makeServingCertificate } from '../support/test-certificates.ts';
import {
  createWorkspace,
  createWorkspaceNamespace,
  deleteWorkspaces,
  installChartTenantCrds,
} from '../support/tenant-fixtures.ts';

const run = promisify(execFile);
const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const objects = kc.makeApiClient(CustomObjectsApi);
const sfx = randomBytes(3).toString('hex');
const PASSWORD = 'Rbac-Pa55word!';
const RBAC_GROUP = 'rbac.authorization.k8s.io';
const WAIT = { timeoutMs: 15_000, intervalMs: 50 };

// kubectl sends bearer tokens only over TLS: the servers serve HTTPS, and this process trusts their CA.
const tls = makeServingCertificate();
setGlobalDispatcher(new Agent({ connect: { ca: tls.caPem } }));
const dir = mkdtempSync(path.join(os.tmpdir(), 'rbac-sync-'));
after(() => {
  tls.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** The client's model objects as plain JSON, for deepEqual. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** Relabels a namespace into another workspace (a JSON merge patch). */
const moveNamespace = (name: string, workspaceLabel: [string, string]) =>
  kubeRequest(kc, `/api/v1/namespaces/${name}`, {
    method: 'PATCH',
    contentType: 'application/merge-patch+json',
    body: { metadata: { labels: { [workspaceLabel[0]]: workspaceLabel[1] } } },
    timeoutMs: 10_000,
  });

const ignore404 = (err: unknown) => {
  if (!(err instanceof ApiException && err.code === 404)) throw err;
};
const missing = async (read: Promise<unknown>) => {
  try {
    await read;
    return false;
  } catch (err) {
    ignore404(err);
    return true;
  }
};

/** May `user` do `verb` on `resource` (in `namespace`, else cluster-wide)? Kubernetes RBAC answers. */
async function allowed(user: string, verb: string, resource: string, group: string, namespace?: string) {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: { user, resourceAttributes: { verb, resource, group, ...(namespace ? { namespace } : {}) } },
    },
  });
  return review.status?.allowed === true;
}
const canDeploy = (user: string, namespace: string) =>
  allowed(user, 'create', 'deployments', 'apps', namespace);

function kubeconfigFor(name: string, server: string, token: string): string {
  const file = path.join(dir, `kubeconfig-${name}`);
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: platform',
      `  cluster: {server: "${server}", certificate-authority-data: "${Buffer.from(tls.caPem).toString('base64')}"}`,
      'users:',
      `- name: ${name}`,
      `  user: {token: "${token}"}`,
      'contexts:',
      `- name: ${name}`,
      `  context: {cluster: platform, user: ${name}}`,
      `current-context: ${name}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return file;
}

function startServer(platform: string, lease: string, extra: string[] = []): Promise<ServerProcess> {
  return startReadyServer([
    `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
    `--platformName=${platform}`,
    `--leaderElection.leaseName=${lease}`,
    `--http.tlsCertFile=${tls.certFile}`,
    `--http.tlsKeyFile=${tls.keyFile}`,
    '--auth.addressRequestsPerMinute=0',
    ...extra,
  ]);
}

async function leads(server: ServerProcess): Promise<boolean> {
  return /^platform_leader_is_leader 1$/m.test(await (await fetch(`${server.url}/metrics`)).text());
}

interface Status {
  kind: string;
  code: number;
  message: string;
}

interface Generated {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  rules?: unknown[];
}

const profiles = iamProfiles(kc, { original: 'rbacsync', ours: 'rbacsyncbare' });

for (const profile of profiles) {
  describe(`platform RBAC in force: ${profile.title}`, () => {
    const P = profile.platform;
    const tag = profile.original ? 'rs' : 'rsb';
    const ADMIN = `${tag}-admin-${sfx}`; // Kubernetes cluster-admin
    const MEMBER = `${tag}-member-${sfx}`; // invited as the workspace's admin
    const LIMITED = `${tag}-limited-${sfx}`; // may write the platform's roles and bindings, holds little
    const USERS = [ADMIN, MEMBER, LIMITED];
    const WS = `${tag}-ws-${sfx}`;
    const WS2 = `${tag}-ws2-${sfx}`;
    const NS_A = `${tag}-a-${sfx}`; // in WS before the invite
    const NS_B = `${tag}-b-${sfx}`; // in WS, made after it
    const NS_OTHER = `${tag}-other-${sfx}`; // in WS2
    const LIMITED_ROLE = `${tag}-limited-${sfx}`;
    const IAM = { group: `iam.${P}.io`, version: 'v1alpha2' };
    const WS_LABEL = `${P}.io/workspace`;
    const GENERATED_FROM = `iam.${P}.io/generated-from`;
    const gen = (kind: string, name: string) => `${P}:${kind.toLowerCase()}:${name}`;
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
    const call = async (user: string, method: string, apiPath: string, body?: unknown) => {
      const res = await fetch(`${server.url}/kapis/iam.${P}.io/v1alpha2/${apiPath}`, {
        method,
        headers: {
          Authorization: `Bearer ${await token(user)}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, text, json: () => JSON.parse(text) as unknown };
    };
    /** A Deployment created as the user through the server's Kubernetes proxy: the status code. */
    const deployAs = async (user: string, namespace: string, name: string) =>
      (
        await fetch(`${server.url}/apis/apps/v1/namespaces/${namespace}/deployments`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${await token(user)}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name },
            spec: {
              selector: { matchLabels: { app: name } },
              template: {
                metadata: { labels: { app: name } },
                spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] },
              },
            },
          }),
        })
      ).status;
    /** kubectl through the server as the user: resolves with its output, rejects with its error. */
    const kubectlAs = async (user: string, args: string[]) =>
      (
        await run(cp.binaries.kubectl, [
          '--kubeconfig',
          kubeconfigFor(`${P}-${user}`, server.url, await token(user)),
          ...args,
        ])
      ).stdout;
    const workspaceRole = (name: string, workspace: string, rules: unknown[], annotations = {}) => ({
      apiVersion: `${IAM.group}/${IAM.version}`,
      kind: 'WorkspaceRole',
      metadata: { name, labels: { [WS_LABEL]: workspace }, annotations },
      rules,
    });
    const generatedRoleBindings = async (namespace: string) =>
      (await rbac.listNamespacedRoleBinding({ namespace, labelSelector: GENERATED_FROM })).items
        .map((b) => b.metadata!.name!)
        .sort();

    const cleanup = async () => {
      await server?.stop();
      await rbac.deleteClusterRoleBinding({ name: `${ADMIN}-cluster-admin` }).catch(ignore404);
      await rbac.deleteClusterRoleBinding({ name: LIMITED_ROLE }).catch(ignore404);
      await rbac.deleteClusterRole({ name: LIMITED_ROLE }).catch(ignore404);
      await deleteWorkspaces(kc, P, [WS, WS2]);
      const roles = (await objects.listClusterCustomObject({ ...IAM, plural: 'workspaceroles' })) as {
        items: Generated[];
      };
      for (const role of roles.items)
        if ([WS, WS2].includes(role.metadata.labels?.[WS_LABEL] ?? ''))
          await objects
            .deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name: role.metadata.name })
            .catch(ignore404);
      if (profile.original)
        for (const plural of ['globalrolebindings', 'globalroles'])
          for (const name of [`${tag}-gr-${sfx}`, `${MEMBER}-${tag}-gr-${sfx}`])
            await objects.deleteClusterCustomObject({ ...IAM, plural, name }).catch(ignore404);
      // Generated objects whose sources went while no server ran (none when the reconciler finished).
      for (const crb of (await rbac.listClusterRoleBinding({ labelSelector: GENERATED_FROM })).items)
        if (crb.metadata!.name!.startsWith(`${P}:`))
          await rbac.deleteClusterRoleBinding({ name: crb.metadata!.name! }).catch(ignore404);
      for (const cr of (await rbac.listClusterRole({ labelSelector: GENERATED_FROM })).items)
        if (cr.metadata!.name!.startsWith(`${P}:`))
          await rbac.deleteClusterRole({ name: cr.metadata!.name! }).catch(ignore404);
      await deleteUsersAndSessions(kc, USERS, P);
    };

    before(async () => {
      await profile.install(P);
      await cleanup();
      for (const name of USERS)
        await createUser(kc, { name, password: PASSWORD, groups: [], email: `${name}@rbac.example` }, P);
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: `${ADMIN}-cluster-admin` },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: ADMIN }],
        },
      });
      // LIMITED may write the platform's roles and bindings and the Kubernetes kinds they become, but holds
      // only `get pods`: what it may grant is that, nothing more.
      await rbac.createClusterRole({
        body: {
          metadata: { name: LIMITED_ROLE },
          rules: [
            {
              apiGroups: [IAM.group],
              resources: [
                'workspaceroles',
                'workspacerolebindings',
                'globalroles',
                'globalrolebindings',
                'users',
              ],
              verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
            },
            {
              apiGroups: [RBAC_GROUP],
              resources: ['clusterroles', 'clusterrolebindings', 'rolebindings'],
              verbs: ['create'],
            },
            { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
          ],
        },
      });
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: LIMITED_ROLE },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: LIMITED_ROLE },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: LIMITED }],
        },
      });
      await createWorkspace(kc, P, WS, ADMIN);
      await createWorkspace(kc, P, WS2, ADMIN);
      await createWorkspaceNamespace(kc, P, WS, NS_A);
      await createWorkspaceNamespace(kc, P, WS2, NS_OTHER);
      server = await startServer(P, `rbac-${P}-${sfx}`);
      await waitFor('the server to lead', async () => ((await leads(server)) ? true : undefined), WAIT);
      // The tenant reconciler makes the workspace's default roles; the RBAC reconciler their ClusterRoles.
      await waitFor(
        'the ClusterRole of the workspace admin role',
        () => rbac.readClusterRole({ name: gen('WorkspaceRole', `${WS}-admin`) }).catch(() => undefined),
        WAIT,
      );
    });
    after(cleanup);

    test('a workspace admin deploys in every project of the workspace, later ones too, nowhere else, until removed', async () => {
      assert.equal(await canDeploy(MEMBER, NS_A), false);
      const invite = await call(ADMIN, 'POST', `workspaces/${WS}/workspacemembers`, [
        { username: MEMBER, roleRef: `${WS}-admin` },
      ]);
      assert.equal(invite.status, 200, invite.text);
      await waitFor(
        'the member to be allowed in the project',
        async () => ((await canDeploy(MEMBER, NS_A)) ? true : undefined),
        WAIT,
      );
      assert.equal(await deployAs(MEMBER, NS_A, 'through-proxy'), 201);
      assert.match(
        await kubectlAs(MEMBER, [
          'create',
          'deployment',
          'with-kubectl',
          '--image=registry.invalid/app:1',
          '-n',
          NS_A,
        ]),
        /deployment.apps\/with-kubectl created/,
      );

      // A project made after the invite.
      await createWorkspaceNamespace(kc, P, WS, NS_B);
      await waitFor(
        'the member to be allowed in the new project',
        async () => ((await canDeploy(MEMBER, NS_B)) ? true : undefined),
        WAIT,
      );
      assert.equal(await deployAs(MEMBER, NS_B, 'through-proxy'), 201);
      await kubectlAs(MEMBER, [
        'create',
        'deployment',
        'with-kubectl',
        '--image=registry.invalid/app:1',
        '-n',
        NS_B,
      ]);

      // Another workspace's project: nothing.
      assert.equal(await canDeploy(MEMBER, NS_OTHER), false);
      assert.equal(await deployAs(MEMBER, NS_OTHER, 'through-proxy'), 403);
      await assert.rejects(
        kubectlAs(MEMBER, ['create', 'deployment', 'nope', '--image=registry.invalid/app:1', '-n', NS_OTHER]),
        /forbidden/i,
      );
      assert.deepEqual(
        (await generatedRoleBindings(NS_OTHER)).filter((n) => n.includes(MEMBER)),
        [],
      );

      // Removed: gone everywhere.
      const removed = await call(ADMIN, 'DELETE', `workspaces/${WS}/workspacemembers/${MEMBER}`);
      assert.equal(removed.status, 200, removed.text);
      await waitFor(
        'the member to lose the projects',
        async () => (!(await canDeploy(MEMBER, NS_A)) && !(await canDeploy(MEMBER, NS_B)) ? true : undefined),
        WAIT,
      );
      assert.equal(await deployAs(MEMBER, NS_A, 'after-removal'), 403);
      assert.equal(await deployAs(MEMBER, NS_B, 'after-removal'), 403);
    });

    test('a project leaving the workspace loses its bindings; generated objects are repaired and go with their source', async () => {
      const ROLE = `${tag}-pods-${sfx}`;
      const BINDING = `${MEMBER}-${ROLE}`;
      await objects.createClusterCustomObject({
        ...IAM,
        plural: 'workspaceroles',
        body: workspaceRole(ROLE, WS, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]),
      });
      const invite = await call(ADMIN, 'POST', `workspaces/${WS}/workspacemembers`, [
        { username: MEMBER, roleRef: ROLE },
      ]);
      assert.equal(invite.status, 200, invite.text);
      const roleName = gen('WorkspaceRole', ROLE);
      const bindingName = gen('WorkspaceRoleBinding', BINDING);
      for (const ns of [NS_A, NS_B])
        await waitFor(
          `the RoleBinding in ${ns}`,
          async () => ((await generatedRoleBindings(ns)).includes(bindingName) ? true : undefined),
          WAIT,
        );
      const made = (await rbac.readClusterRole({ name: roleName })) as Generated;
      assert.equal(made.metadata.labels?.[`${P}.io/managed-by`], 'platform-apiserver');
      assert.equal(made.metadata.labels?.[GENERATED_FROM], 'WorkspaceRole');
      assert.equal(made.metadata.annotations?.[`iam.${P}.io/generated-from-name`], ROLE);
      assert.deepEqual(plain(made.rules), [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]);
      const rb = await rbac.readNamespacedRoleBinding({ name: bindingName, namespace: NS_A });
      assert.deepEqual(plain(rb.roleRef), { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName });
      assert.deepEqual(plain(rb.subjects), [{ kind: 'User', apiGroup: RBAC_GROUP, name: MEMBER }]);
      assert.equal(rb.metadata?.annotations?.[`iam.${P}.io/generated-from-name`], BINDING);

      // Drift: an edited ClusterRole and a deleted RoleBinding are put back.
      await rbac.replaceClusterRole({ name: roleName, body: { ...made, rules: [] } });
      await rbac.deleteNamespacedRoleBinding({ name: bindingName, namespace: NS_A });
      await waitFor(
        'the rules back',
        async () => {
          const now = (await rbac.readClusterRole({ name: roleName })) as Generated;
          return now.rules?.length === 1 ? true : undefined;
        },
        WAIT,
      );
      await waitFor(
        'the RoleBinding back',
        async () => ((await generatedRoleBindings(NS_A)).includes(bindingName) ? true : undefined),
        WAIT,
      );

      // NS_B moves to the other workspace: it loses this workspace's bindings; moved back, it has them.
      await moveNamespace(NS_B, [WS_LABEL, WS2]);
      await waitFor(
        'NS_B without the binding',
        async () => ((await generatedRoleBindings(NS_B)).includes(bindingName) ? undefined : true),
        WAIT,
      );
      assert.equal(await allowed(MEMBER, 'get', 'configmaps', '', NS_B), false);
      await moveNamespace(NS_B, [WS_LABEL, WS]);
      await waitFor(
        'NS_B with the binding again',
        async () => ((await generatedRoleBindings(NS_B)).includes(bindingName) ? true : undefined),
        WAIT,
      );

      // The sources deleted: what was made of them goes (no garbage collector runs here).
      await objects.deleteClusterCustomObject({ ...IAM, plural: 'workspacerolebindings', name: BINDING });
      await waitFor(
        'the RoleBindings gone',
        async () =>
          (await generatedRoleBindings(NS_A)).includes(bindingName) ||
          (await generatedRoleBindings(NS_B)).includes(bindingName)
            ? undefined
            : true,
        WAIT,
      );
      await objects.deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name: ROLE });
      await waitFor(
        'the ClusterRole gone',
        async () => ((await missing(rbac.readClusterRole({ name: roleName }))) ? true : undefined),
        WAIT,
      );
    });

    test('a role aggregating templates follows them, and so does its ClusterRole', async () => {
      const TEMPLATE = `${tag}-template-${sfx}`;
      const AGGREGATE = `${tag}-aggregate-${sfx}`;
      const one = { apiGroups: [''], resources: ['services'], verbs: ['get'] };
      const two = { apiGroups: [''], resources: ['services'], verbs: ['list'] };
      await objects.createClusterCustomObject({
        ...IAM,
        plural: 'workspaceroles',
        body: workspaceRole(TEMPLATE, WS, [one]),
      });
      const created = await call(ADMIN, 'POST', `workspaces/${WS}/workspaceroles`, {
        ...workspaceRole(AGGREGATE, WS, [], {
          [`iam.${P}.io/aggregation-roles`]: JSON.stringify([TEMPLATE]),
        }),
      });
      assert.equal(created.status, 200, created.text);
      assert.deepEqual((created.json() as Generated).rules, [one]);
      const template = (await objects.getClusterCustomObject({
        ...IAM,
        plural: 'workspaceroles',
        name: TEMPLATE,
      })) as Generated;
      await objects.replaceClusterCustomObject({
        ...IAM,
        plural: 'workspaceroles',
        name: TEMPLATE,
        body: { ...template, rules: [one, two] },
      });
      await waitFor(
        'the aggregate recomputed',
        async () => {
          const role = (await objects.getClusterCustomObject({
            ...IAM,
            plural: 'workspaceroles',
            name: AGGREGATE,
          })) as Generated;
          return role.rules?.length === 2 ? role : undefined;
        },
        WAIT,
      );
      await waitFor(
        'its ClusterRole too',
        async () => {
          const role = (await rbac.readClusterRole({ name: gen('WorkspaceRole', AGGREGATE) })) as Generated;
          return role.rules?.length === 2 ? true : undefined;
        },
        WAIT,
      );
      for (const name of [AGGREGATE, TEMPLATE])
        await objects.deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name });
    });

    test('escalation is refused with 403 and nothing is written', async () => {
      const fails = async (res: ReturnType<typeof call>, message: RegExp) => {
        const { status, text, json } = await res;
        assert.equal(status, 403, text);
        const body = json() as Status;
        assert.equal(body.kind, 'Status');
        assert.match(body.message, message);
      };
      // A workspace role granting what LIMITED does not hold.
      const WIDE = `${tag}-wide-${sfx}`;
      await fails(
        call(
          LIMITED,
          'POST',
          `workspaces/${WS}/workspaceroles`,
          workspaceRole(WIDE, WS, [{ apiGroups: [''], resources: ['secrets'], verbs: ['*'] }]),
        ),
        /attempting to grant RBAC permissions not currently held/,
      );
      assert.ok(
        await missing(objects.getClusterCustomObject({ ...IAM, plural: 'workspaceroles', name: WIDE })),
      );
      // What it does hold, it may grant.
      const NARROW = `${tag}-narrow-${sfx}`;
      const narrow = await call(
        LIMITED,
        'POST',
        `workspaces/${WS}/workspaceroles`,
        workspaceRole(NARROW, WS, [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]),
      );
      assert.equal(narrow.status, 200, narrow.text);
      // Changing it to more than that: refused, the stored role unchanged.
      await fails(
        call(LIMITED, 'PATCH', `workspaces/${WS}/workspaceroles/${NARROW}`, {
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['*'] }],
        }),
        /not currently held/,
      );
      const stored = (await objects.getClusterCustomObject({
        ...IAM,
        plural: 'workspaceroles',
        name: NARROW,
      })) as Generated;
      assert.deepEqual(stored.rules, [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]);

      // Binding the workspace's admin role (everything in its projects): refused, no binding written.
      await fails(
        call(LIMITED, 'POST', `workspaces/${WS}/workspacemembers`, [
          { username: MEMBER, roleRef: `${WS}-admin` },
        ]),
        /not currently held/,
      );
      const bindings = (await objects.listClusterCustomObject({
        ...IAM,
        plural: 'workspacerolebindings',
        labelSelector: `iam.${P}.io/user-ref=${MEMBER}`,
      })) as { items: { roleRef: { name: string } }[] };
      assert.deepEqual(
        bindings.items.filter((b) => b.roleRef.name === `${WS}-admin`),
        [],
      );
      await objects.deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name: NARROW });

      if (!profile.original) return;
      // A GlobalRole beyond the caller's rights, and binding one to a user.
      const GR = `${tag}-gr-${sfx}`;
      await fails(
        call(LIMITED, 'POST', 'globalroles', {
          apiVersion: `${IAM.group}/${IAM.version}`,
          kind: 'GlobalRole',
          metadata: { name: GR },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
        }),
        /not currently held/,
      );
      assert.ok(await missing(objects.getClusterCustomObject({ ...IAM, plural: 'globalroles', name: GR })));
      const made = await call(ADMIN, 'POST', 'globalroles', {
        apiVersion: `${IAM.group}/${IAM.version}`,
        kind: 'GlobalRole',
        metadata: { name: GR },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
      });
      assert.equal(made.status, 200, made.text);
      await waitFor(
        'the GlobalRole in force',
        () => rbac.readClusterRole({ name: gen('GlobalRole', GR) }).catch(() => undefined),
        WAIT,
      );
      const user = (await call(ADMIN, 'GET', `users/${MEMBER}`).then((r) => r.json())) as {
        metadata: { name: string; resourceVersion: string; annotations?: Record<string, string> };
        spec: Record<string, unknown>;
      };
      await fails(
        call(LIMITED, 'PUT', `users/${MEMBER}`, {
          ...user,
          metadata: {
            ...user.metadata,
            annotations: { ...user.metadata.annotations, [`iam.${P}.io/globalrole`]: GR },
          },
        }),
        /forbidden/i,
      );
      const globalBindings = (await objects.listClusterCustomObject({
        ...IAM,
        plural: 'globalrolebindings',
        labelSelector: `iam.${P}.io/user-ref=${MEMBER}`,
      })) as { items: unknown[] };
      assert.deepEqual(globalBindings.items, []);
    });

    if (profile.original)
      test('a GlobalRoleBinding grants its GlobalRole cluster-wide; deleted, it grants nothing', async () => {
        const GR = `${tag}-gr-${sfx}`;
        const GRB = `${MEMBER}-${GR}`;
        assert.equal(await allowed(MEMBER, 'list', 'configmaps', '', NS_OTHER), false);
        // The users API binds the platform role, as the console's "Edit user" does.
        const user = (await call(ADMIN, 'GET', `users/${MEMBER}`).then((r) => r.json())) as {
          metadata: { annotations?: Record<string, string> };
        };
        const set = await call(ADMIN, 'PUT', `users/${MEMBER}`, {
          ...user,
          metadata: {
            ...user.metadata,
            annotations: { ...user.metadata.annotations, [`iam.${P}.io/globalrole`]: GR },
          },
        });
        assert.equal(set.status, 200, set.text);
        await waitFor(
          'the role in force everywhere',
          async () =>
            (await allowed(MEMBER, 'list', 'configmaps', '')) &&
            (await allowed(MEMBER, 'list', 'configmaps', '', NS_OTHER))
              ? true
              : undefined,
          WAIT,
        );
        const crb = await rbac.readClusterRoleBinding({ name: gen('GlobalRoleBinding', GRB) });
        assert.deepEqual(plain(crb.roleRef), {
          apiGroup: RBAC_GROUP,
          kind: 'ClusterRole',
          name: gen('GlobalRole', GR),
        });
        assert.equal(crb.metadata?.labels?.[GENERATED_FROM], 'GlobalRoleBinding');
        // Not a cluster member for it: a generated binding is the platform's, not the cluster's.
        const members = await call(ADMIN, 'GET', 'clustermembers');
        assert.doesNotMatch(members.text, new RegExp(MEMBER));

        await objects.deleteClusterCustomObject({ ...IAM, plural: 'globalrolebindings', name: GRB });
        await waitFor(
          'the ClusterRoleBinding gone',
          async () =>
            (await missing(rbac.readClusterRoleBinding({ name: gen('GlobalRoleBinding', GRB) })))
              ? true
              : undefined,
          WAIT,
        );
        assert.equal(await allowed(MEMBER, 'list', 'configmaps', ''), false);
        await objects.deleteClusterCustomObject({ ...IAM, plural: 'globalroles', name: GR });
        await waitFor(
          'the ClusterRole gone',
          async () =>
            (await missing(rbac.readClusterRole({ name: gen('GlobalRole', GR) }))) ? true : undefined,
          WAIT,
        );
      });
  });
}

describe('the RBAC reconciler in one replica: the leader killed, the other takes over', () => {
  const P = 'rbacsyncha';
  const WS = `rsha-ws-${sfx}`;
  const NS = `rsha-ns-${sfx}`;
  const USERS = [`rsha-one-${sfx}`, `rsha-two-${sfx}`];
  const LEASE = `rbac-ha-${sfx}`;
  const IAM = { group: `iam.${P}.io`, version: 'v1alpha2' };
  const servers: ServerProcess[] = [];
  const TIMING = [
    '--leaderElection.leaseDurationSeconds=6',
    '--leaderElection.renewDeadlineSeconds=4',
    '--leaderElection.retryPeriodSeconds=1',
  ];
  const bind = (user: string) =>
    objects.createClusterCustomObject({
      ...IAM,
      plural: 'workspacerolebindings',
      body: {
        apiVersion: `${IAM.group}/${IAM.version}`,
        kind: 'WorkspaceRoleBinding',
        metadata: { name: `${user}-${WS}-viewer`, labels: { [`${P}.io/workspace`]: WS } },
        roleRef: { apiGroup: IAM.group, kind: 'WorkspaceRole', name: `${WS}-viewer` },
        subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: user }],
      },
    });
  const generatedInNs = async () =>
    (
      await rbac.listNamespacedRoleBinding({ namespace: NS, labelSelector: `iam.${P}.io/generated-from` })
    ).items
      .map((b) => b.metadata!.name!)
      .sort();

  before(async () => {
    await installIamCrds(kc, P);
    await installChartTenantCrds(kc, P);
    await createWorkspace(kc, P, WS, 'nobody');
    await createWorkspaceNamespace(kc, P, WS, NS);
  });
  after(async () => {
    for (const s of servers) await s.stop();
    await deleteWorkspaces(kc, P, [WS]);
    for (const cr of (await rbac.listClusterRole({ labelSelector: `iam.${P}.io/generated-from` })).items)
      await rbac.deleteClusterRole({ name: cr.metadata!.name! }).catch(ignore404);
    const roles = (await objects.listClusterCustomObject({ ...IAM, plural: 'workspaceroles' })) as {
      items: Generated[];
    };
    for (const role of roles.items)
      if (role.metadata.labels?.[`${P}.io/workspace`] === WS)
        await objects
          .deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name: role.metadata.name })
          .catch(ignore404);
  });

  test('no generated binding lost or made twice across a SIGKILL of the leader', async () => {
    const a = await startServer(P, LEASE, TIMING);
    servers.push(a);
    await waitFor('a to lead', async () => ((await leads(a)) ? true : undefined), WAIT);
    const b = await startServer(P, LEASE, TIMING);
    servers.push(b);
    await bind(USERS[0]!);
    const first = `${P}:workspacerolebinding:${USERS[0]}-${WS}-viewer`;
    await waitFor(
      'the first binding in force',
      async () => ((await generatedInNs()).includes(first) ? true : undefined),
      WAIT,
    );
    assert.equal(await leads(b), false, 'exactly one leader');

    a.child.kill('SIGKILL');
    await a.exited;
    // Made while nobody leads: the successor's full pass catches up.
    await bind(USERS[1]!);
    await waitFor('b to lead', async () => ((await leads(b)) ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    const second = `${P}:workspacerolebinding:${USERS[1]}-${WS}-viewer`;
    await waitFor(
      'the second binding in force',
      async () => ((await generatedInNs()).includes(second) ? true : undefined),
      WAIT,
    );
    assert.deepEqual(await generatedInNs(), [first, second].sort());
    const all = (await rbac.listRoleBindingForAllNamespaces({ labelSelector: `iam.${P}.io/generated-from` }))
      .items;
    assert.equal(
      all.length,
      2,
      JSON.stringify(all.map((x) => `${x.metadata?.namespace}/${x.metadata?.name}`)),
    );
    for (const user of USERS)
      assert.equal(await allowed(user, 'list', 'pods', '', NS), true, `${user} may list pods in ${NS}`);
    for (const user of USERS)
      await objects.deleteClusterCustomObject({
        ...IAM,
        plural: 'workspacerolebindings',
        name: `${user}-${WS}-viewer`,
      });
    await waitFor('both gone', async () => ((await generatedInNs()).length === 0 ? true : undefined), WAIT);
  });
});
