// The tenant reconciler on the real kube-apiserver, through the real server: for the original's CRDs
// (platformName kubesphere, seed-shaped CRDs and RoleBases) and for our chart's CRDs (platform). Then
// leader election between real server processes: a graceful handover and a leader killed with SIGKILL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { AuthorizationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../../src/cluster/kube-request.ts';
import { namespaceRoleDefaults, workspaceRoleDefaults } from '../../src/tenant/default-roles.ts';
import { tenantPaths } from '../../src/tenant/tenant-paths.ts';
import { tenantNames, type TenantNames } from '../../src/tenant/tenant-store.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installCrdFiles,
  installIamCrds,
  SEED_CRD_FILES,
  SEED_ROLE_CRD_FILES,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import { sampleSum } from '../support/metrics-exposition.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import {
  createRoleBases,
  deleteReconciled,
  installChartTenantCrds,
  installTenantCrds,
  ROLE_BASE_CRD_FILE,
} from '../support/tenant-fixtures.ts';

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);

interface Obj {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    uid?: string;
    ownerReferences?: unknown[];
  };
  spec?: Record<string, unknown>;
  rules?: unknown[];
  roleRef?: unknown;
  subjects?: unknown[];
}

const get = async (path: string): Promise<Obj | undefined> => {
  try {
    return await kubeRequest<Obj>(kc, path, { timeoutMs: 10_000 });
  } catch (err) {
    if (err instanceof KubeRequestError && err.statusCode === 404) return undefined;
    throw err;
  }
};
const list = async (path: string, labelSelector: string): Promise<Obj[]> =>
  (
    await kubeRequest<{ items: Obj[] }>(kc, `${path}?labelSelector=${encodeURIComponent(labelSelector)}`, {
      timeoutMs: 10_000,
    })
  ).items;
const send = (path: string, method: 'POST' | 'PUT' | 'DELETE', body?: unknown) =>
  kubeRequest<Obj>(kc, path, { method, ...(body === undefined ? {} : { body }), timeoutMs: 10_000 });
const mergePatch = (path: string, body: unknown) =>
  kubeRequest<Obj>(kc, path, {
    method: 'PATCH',
    contentType: 'application/merge-patch+json',
    body,
    timeoutMs: 10_000,
  });

/** May `user` do `verb` on `resource` in `namespace`? Kubernetes RBAC answers. */
async function allowed(user: string, verb: string, resource: string, group: string, namespace: string) {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: { spec: { user, resourceAttributes: { verb, resource, group, namespace } } },
  });
  return review.status?.allowed === true;
}

/** Whether the server leads (its leader gauge). */
async function leads(server: ServerProcess): Promise<boolean> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return /^platform_leader_is_leader 1$/m.test(text);
}

const WAIT = { timeoutMs: 15_000, intervalMs: 50 };

interface Profile {
  platform: string;
  install(): Promise<void>;
  /** Extra default project roles the profile's RoleBases add. */
  extraNamespaceRoles: string[];
}

const PROFILES: Profile[] = [
  {
    platform: 'kubesphere',
    extraNamespaceRoles: ['role-template-view-basic'],
    async install() {
      await installCrdFiles(
        kc,
        [...SEED_CRD_FILES, ...SEED_ROLE_CRD_FILES, ROLE_BASE_CRD_FILE],
        'kubesphere',
      );
      await installIamCrds(kc, 'kubesphere', { except: ['users'] });
      await installTenantCrds(kc, 'kubesphere');
    },
  },
  {
    platform: 'platform',
    extraNamespaceRoles: [],
    async install() {
      await installIamCrds(kc, 'platform');
      await installChartTenantCrds(kc, 'platform');
    },
  },
];

for (const profile of PROFILES) {
  const P = profile.platform;
  const names: TenantNames = tenantNames(P);
  const paths = tenantPaths(names);
  const sfx = randomBytes(3).toString('hex');
  const MANAGER = `rec-manager-${sfx}`;
  const CREATOR = `rec-creator-${sfx}`;
  const ws = (n: number) => `rec-ws${n}-${sfx}`;
  const nsName = (n: number) => `rec-ns${n}-${sfx}`;
  const OUTSIDE = `rec-outside-${sfx}`;
  const workspacesMade: string[] = [];
  const namespacesMade: string[] = [OUTSIDE];

  const createTemplate = async (name: string, extra: { labels?: Record<string, string> } = {}) => {
    workspacesMade.push(name);
    await send(paths.templates, 'POST', {
      apiVersion: `${names.tenantGroup}/v1alpha2`,
      kind: 'WorkspaceTemplate',
      metadata: { name },
      spec: {
        template: {
          ...(extra.labels ? { metadata: { labels: extra.labels } } : {}),
          spec: { manager: MANAGER },
        },
        placement: {},
      },
    });
  };
  const createNamespace = async (name: string, workspace: string, creator = CREATOR) => {
    namespacesMade.push(name);
    await core.createNamespace({
      body: {
        metadata: {
          name,
          labels: { [names.workspaceLabel]: workspace },
          annotations: { [names.creatorAnnotation]: creator },
        },
      },
    });
  };

  describe(`tenant reconciler, platformName ${P}`, () => {
    let server: ServerProcess;

    before(async () => {
      await profile.install();
      if (P === 'kubesphere') await createRoleBases(kc, P);
      for (const user of [MANAGER, CREATOR])
        await createUser(
          kc,
          { name: user, password: 'Rec-Pa55word!', groups: [], email: `${user}@rec.example` },
          P,
        );
      await core.createNamespace({ body: { metadata: { name: OUTSIDE } } });
      server = await startReadyServer([
        `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
        `--platformName=${P}`,
        `--leaderElection.leaseName=rec-${P}-${sfx}`,
      ]);
      await waitFor('the server to lead', async () => ((await leads(server)) ? true : undefined), WAIT);
    });
    after(async () => {
      await server?.stop();
      await deleteReconciled(kc, P, workspacesMade, namespacesMade);
      await deleteUsersAndSessions(kc, [MANAGER, CREATOR], P);
    });

    test('a WorkspaceTemplate gets its Workspace, which follows the template', async () => {
      await createTemplate(ws(1), { labels: { team: 'blue' } });
      const workspace = await waitFor('the Workspace', () => get(`${paths.workspaces}/${ws(1)}`), WAIT);
      assert.deepEqual(workspace.spec, { manager: MANAGER });
      assert.equal(workspace.metadata.labels?.[names.managedByLabel], 'platform-apiserver');
      // The original's schema has no fields under spec.template.metadata: our chart's CRD drops the labels
      // written there; the seed-shaped CRD keeps them, and the Workspace gets them.
      assert.equal(workspace.metadata.labels?.['team'], P === 'kubesphere' ? 'blue' : undefined);
      const template = await get(`${paths.templates}/${ws(1)}`);
      assert.deepEqual(template?.metadata.finalizers, [names.templateFinalizer]);

      await mergePatch(`${paths.templates}/${ws(1)}`, {
        spec: { template: { spec: { manager: MANAGER, networkIsolation: true } } },
      });
      await waitFor(
        'the Workspace to follow the template',
        async () =>
          (await get(`${paths.workspaces}/${ws(1)}`))?.spec?.['networkIsolation'] === true || undefined,
        WAIT,
      );
    });

    test("the workspace's default roles, and its manager bound as admin", async () => {
      const expected = workspaceRoleDefaults([], names);
      for (const role of expected) {
        const found = await waitFor(
          `WorkspaceRole ${ws(1)}-${role.name}`,
          () => get(`${paths.workspaceRoles}/${ws(1)}-${role.name}`),
          WAIT,
        );
        assert.equal(found.metadata.labels?.[names.workspaceLabel], ws(1));
        assert.deepEqual(found.rules, role.rules);
        assert.deepEqual(found.metadata.annotations, role.annotations);
      }
      assert.deepEqual(expected.map((r) => r.name).sort(), [
        'admin',
        'regular',
        'self-provisioner',
        'viewer',
      ]);
      const binding = await waitFor(
        'the manager binding',
        () => get(`${paths.workspaceRoleBindings}/${ws(1)}-admin`),
        WAIT,
      );
      assert.equal(binding.metadata.labels?.[names.userRefLabel], MANAGER);
      assert.equal(binding.metadata.labels?.[names.workspaceLabel], ws(1));
      assert.deepEqual(binding.roleRef, {
        apiGroup: names.iamGroup,
        kind: 'WorkspaceRole',
        name: `${ws(1)}-admin`,
      });
      assert.deepEqual(binding.subjects, [
        { name: MANAGER, kind: 'User', apiGroup: 'rbac.authorization.k8s.io' },
      ]);
    });

    test("a workspace's namespace gets the default Roles, and its creator is admin there by Kubernetes RBAC", async () => {
      await createNamespace(nsName(1), ws(1));
      const roles = [...namespaceRoleDefaults([], names).map((r) => r.name), ...profile.extraNamespaceRoles];
      for (const role of roles)
        await waitFor(`Role ${role}`, () => get(`${paths.roles(nsName(1))}/${role}`), WAIT);
      const binding = await waitFor(
        'the creator binding',
        () => get(`${paths.roleBindings(nsName(1))}/${CREATOR}-admin`),
        WAIT,
      );
      assert.equal(binding.metadata.labels?.[names.userRefLabel], CREATOR);
      assert.deepEqual(binding.roleRef, {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'admin',
      });
      assert.equal(await allowed(CREATOR, 'create', 'deployments', 'apps', nsName(1)), true);
      assert.equal(await allowed(CREATOR, 'delete', 'secrets', '', nsName(1)), true);
      assert.equal(await allowed(CREATOR, 'create', 'deployments', 'apps', OUTSIDE), false);
      const ns = await waitFor(
        'the namespace marked',
        async () => {
          const found = await get(`/api/v1/namespaces/${nsName(1)}`);
          return found?.metadata.finalizers?.includes(names.namespaceFinalizer) ? found : undefined;
        },
        WAIT,
      );
      assert.equal(ns.metadata.labels?.[names.namespaceLabel], nsName(1));
    });

    test('drift is repaired: a deleted Role, a changed WorkspaceRole, a deleted Workspace', async () => {
      await send(`${paths.roles(nsName(1))}/operator`, 'DELETE');
      const viewer = `${paths.workspaceRoles}/${ws(1)}-viewer`;
      const current = (await get(viewer))!;
      await send(viewer, 'PUT', {
        ...current,
        rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
      });
      await send(`${paths.workspaces}/${ws(1)}`, 'DELETE');

      const operator = await waitFor('the Role again', () => get(`${paths.roles(nsName(1))}/operator`), WAIT);
      assert.deepEqual(
        operator.rules,
        namespaceRoleDefaults([], names).find((r) => r.name === 'operator')?.rules,
      );
      const readOnly = workspaceRoleDefaults([], names).find((r) => r.name === 'viewer')!.rules;
      await waitFor(
        'the WorkspaceRole restored',
        async () =>
          JSON.stringify((await get(viewer))?.rules) === JSON.stringify(readOnly) ? true : undefined,
        WAIT,
      );
      await waitFor(
        'the Workspace again',
        async () => {
          const w = await get(`${paths.workspaces}/${ws(1)}`);
          return w && !w.metadata.deletionTimestamp ? true : undefined;
        },
        WAIT,
      );
      // The creator binding is made once: a creator removed from the project stays removed.
      await send(`${paths.roleBindings(nsName(1))}/${CREATOR}-admin`, 'DELETE');
      await send(`${paths.roles(nsName(1))}/viewer`, 'DELETE');
      await waitFor('the viewer Role again', () => get(`${paths.roles(nsName(1))}/viewer`), WAIT);
      assert.equal(await get(`${paths.roleBindings(nsName(1))}/${CREATOR}-admin`), undefined);
    });

    test('deleting a template deletes its Workspace, namespaces and roles', async () => {
      await createTemplate(ws(2));
      await createNamespace(nsName(2), ws(2));
      await createNamespace(nsName(3), ws(2));
      await waitFor('the Workspace', () => get(`${paths.workspaces}/${ws(2)}`), WAIT);
      await waitFor('the admin role', () => get(`${paths.workspaceRoles}/${ws(2)}-admin`), WAIT);
      await waitFor('the roles of a namespace', () => get(`${paths.roles(nsName(3))}/admin`), WAIT);

      await send(`${paths.templates}/${ws(2)}`, 'DELETE');
      await waitFor(
        'the template gone',
        async () => ((await get(`${paths.templates}/${ws(2)}`)) ? undefined : true),
        WAIT,
      );
      assert.equal(await get(`${paths.workspaces}/${ws(2)}`), undefined);
      for (const ns of [nsName(2), nsName(3)]) {
        // No namespace controller in this control plane: the namespaces stay Terminating.
        const found = await get(`/api/v1/namespaces/${ns}`);
        assert.ok(found?.metadata.deletionTimestamp, `${ns} is being deleted`);
      }
      assert.deepEqual(await list(paths.workspaceRoles, `${names.workspaceLabel}=${ws(2)}`), []);
      assert.deepEqual(await list(paths.workspaceRoleBindings, `${names.workspaceLabel}=${ws(2)}`), []);
      // Our finalizer on a terminating namespace is removed (the kubernetes one stays: no controller).
      await waitFor(
        'the namespace finalizer removed',
        async () =>
          (await get(`/api/v1/namespaces/${nsName(2)}`))?.metadata.finalizers?.includes(
            names.namespaceFinalizer,
          )
            ? undefined
            : true,
        WAIT,
      );
    });

    test('deleting with the orphan finalizer keeps the namespaces, without the workspace label', async () => {
      await createTemplate(ws(3));
      await createNamespace(nsName(4), ws(3));
      const owner = await waitFor('the Workspace', () => get(`${paths.workspaces}/${ws(3)}`), WAIT);
      // As the original's namespace controller leaves it: owned by the Workspace.
      await mergePatch(`/api/v1/namespaces/${nsName(4)}`, {
        metadata: {
          ownerReferences: [
            {
              apiVersion: `${names.tenantGroup}/v1alpha1`,
              kind: 'Workspace',
              name: ws(3),
              uid: owner.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
      });
      await waitFor('the namespace marked', async () => {
        const found = await get(`/api/v1/namespaces/${nsName(4)}`);
        return found?.metadata.finalizers?.includes(names.namespaceFinalizer) ? true : undefined;
      });
      // As the delete route does for propagationPolicy Orphan: the orphan finalizer, then DELETE.
      const template = (await get(`${paths.templates}/${ws(3)}`))!;
      await mergePatch(`${paths.templates}/${ws(3)}`, {
        metadata: { finalizers: [...(template.metadata.finalizers ?? []), names.orphanFinalizer] },
      });
      await send(`${paths.templates}/${ws(3)}`, 'DELETE');
      await waitFor(
        'the template gone',
        async () => ((await get(`${paths.templates}/${ws(3)}`)) ? undefined : true),
        WAIT,
      );
      assert.equal(await get(`${paths.workspaces}/${ws(3)}`), undefined);
      const ns = await get(`/api/v1/namespaces/${nsName(4)}`);
      assert.equal(ns?.metadata.deletionTimestamp, undefined, 'not deleted');
      assert.equal(ns?.metadata.labels?.[names.workspaceLabel], undefined, 'no longer in the workspace');
      assert.deepEqual(ns?.metadata.ownerReferences, undefined, 'no longer owned by the Workspace');
      // Orphaned: the roles stay (what a garbage collector would have left).
      assert.ok(await get(`${paths.workspaceRoles}/${ws(3)}-admin`));
    });

    test('the reconcile metrics count the work; readiness never depended on leading', async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      assert.ok(sampleSum(text, 'platform_reconcile_total', { reconciler: 'tenant', result: 'success' }) > 0);
      assert.ok(sampleSum(text, 'platform_leader_changes_total', { change: 'acquired' }) === 1);
      const ready = await (await fetch(`${server.url}/readyz?verbose`)).text();
      assert.doesNotMatch(ready, /leader/i);
    });
  });
}

describe('leader election between server processes', () => {
  const P = 'platform';
  const names = tenantNames(P);
  const paths = tenantPaths(names);
  const sfx = randomBytes(3).toString('hex');
  const CREATOR = `rec-ha-creator-${sfx}`;
  const LEASE = `rec-ha-${sfx}`;
  const TIMING = [
    '--leaderElection.leaseDurationSeconds=6',
    '--leaderElection.renewDeadlineSeconds=4',
    '--leaderElection.retryPeriodSeconds=1',
  ];
  const servers: ServerProcess[] = [];
  const workspaces = [`rec-ha1-${sfx}`, `rec-ha2-${sfx}`, `rec-ha3-${sfx}`];
  const namespaces = [`rec-ha-ns-${sfx}`];

  const start = async () => {
    const server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P}`,
      `--leaderElection.leaseName=${LEASE}`,
      ...TIMING,
    ]);
    servers.push(server);
    return server;
  };
  const createTemplate = (name: string) =>
    send(paths.templates, 'POST', {
      apiVersion: `${names.tenantGroup}/v1alpha2`,
      kind: 'WorkspaceTemplate',
      metadata: { name },
      spec: { template: { spec: { manager: CREATOR } }, placement: {} },
    });
  const workspaceAppears = (name: string) =>
    waitFor(`Workspace ${name}`, () => get(`${paths.workspaces}/${name}`), WAIT);
  const leaderOf = async (candidates: ServerProcess[]) => {
    const leading = [];
    for (const s of candidates) if (await leads(s)) leading.push(s);
    return leading;
  };

  before(async () => {
    await installIamCrds(kc, P);
    await installChartTenantCrds(kc, P);
    await createUser(kc, { name: CREATOR, password: 'Rec-Pa55word!', groups: [] }, P);
  });
  after(async () => {
    for (const s of servers) await s.stop();
    await deleteReconciled(kc, P, workspaces, namespaces);
    await deleteUsersAndSessions(kc, [CREATOR], P);
  });

  test('one leads; a stopped leader hands over at once; a killed one within the lease duration', async () => {
    const a = await start();
    await waitFor('a to lead', async () => ((await leads(a)) ? true : undefined), WAIT);
    const b = await start();
    await createTemplate(workspaces[0]!);
    await workspaceAppears(workspaces[0]!);
    assert.deepEqual(await leaderOf([a, b]), [a], 'exactly one leader');

    // SIGTERM: a stops its reconcilers and releases the lease; b takes it at its next try.
    const stopped = performance.now();
    assert.equal(await a.stop(), 0);
    await waitFor('b to lead', async () => ((await leads(b)) ? true : undefined), WAIT);
    const handover = performance.now() - stopped;
    assert.ok(handover < 3000, `handover after a graceful stop took ${Math.round(handover)} ms`);
    await createTemplate(workspaces[1]!);
    await workspaceAppears(workspaces[1]!);

    // SIGKILL: no release; c waits for the lease to expire (6 s without renewal, by its own clock).
    const c = await start();
    assert.deepEqual(await leaderOf([b, c]), [b]);
    const killed = performance.now();
    b.child.kill('SIGKILL');
    await b.exited;
    await waitFor('c to lead', async () => ((await leads(c)) ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    const takeover = performance.now() - killed;
    // The lease duration, plus at most one retry period for c to notice the last renewal and one to try.
    assert.ok(takeover <= 6000 + 2 * 1000 + 500, `takeover after SIGKILL took ${Math.round(takeover)} ms`);
    console.log(
      `# leader handover: graceful ${Math.round(handover)} ms, after SIGKILL ${Math.round(takeover)} ms`,
    );

    // Work continues, and nothing was made twice.
    await createTemplate(workspaces[2]!);
    await workspaceAppears(workspaces[2]!);
    await core.createNamespace({
      body: {
        metadata: {
          name: namespaces[0]!,
          labels: { [names.workspaceLabel]: workspaces[2]! },
          annotations: { [names.creatorAnnotation]: CREATOR },
        },
      },
    });
    await waitFor(
      'the creator allowed',
      async () =>
        (await allowed(CREATOR, 'create', 'deployments', 'apps', namespaces[0]!)) ? true : undefined,
      WAIT,
    );
    for (const workspace of workspaces) {
      const bindings = await list(paths.workspaceRoleBindings, `${names.workspaceLabel}=${workspace}`);
      assert.deepEqual(
        bindings.map((b) => b.metadata.name),
        [`${workspace}-admin`],
      );
      const roles = await list(paths.workspaceRoles, `${names.workspaceLabel}=${workspace}`);
      assert.equal(roles.length, 4, workspace);
    }
    const bindings = await list(paths.roleBindings(namespaces[0]!), `${names.userRefLabel}=${CREATOR}`);
    assert.deepEqual(
      bindings.map((b) => b.metadata.name),
      [`${CREATOR}-admin`],
    );
    const text = await (await fetch(`${c.url}/metrics`)).text();
    assert.equal(sampleSum(text, 'platform_leader_changes_total', { change: 'acquired' }), 1);
  });
});
