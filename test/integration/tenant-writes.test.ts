import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { ServerProcess } from '../support/server-process.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import { OpenApiConformance } from '../support/openapi-conformance.ts';
import {
  deleteWorkspaces,
  installChartTenantCrds,
  installTenantCrds,
  tenantGroups,
} from '../support/tenant-fixtures.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { waitFor } from '../cluster/wait-for.ts';

/**
 * Both profiles: the original's tenant CRDs (seed-shaped, as where the original system is installed) and
 * the chart's own. Each with a platform name and object prefix of this file's own, so its CRDs and
 * objects are nobody else's.
 */
const PROFILES = [
  { name: "the original's CRDs", platform: 'tenantwr', prefix: 'twr', install: installTenantCrds },
  { name: "the chart's CRDs", platform: 'tenantwc', prefix: 'twc', install: installChartTenantCrds },
];

interface Obj {
  kind?: string;
  apiVersion?: string;
  metadata: {
    name: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
}
interface StatusBody {
  kind: string;
  code: number;
  reason: string;
  message: string;
  details?: { causes?: { field?: string }[] };
}

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const core = kc.makeApiClient(CoreV1Api);
const objects = kc.makeApiClient(CustomObjectsApi);

for (const profile of PROFILES) {
  const P = profile.platform;
  const PREFIX = profile.prefix;
  const WS = {
    one: `${PREFIX}-one`,
    two: `${PREFIX}-two`,
    orphan: `${PREFIX}-orphan`,
    gone: `${PREFIX}-gone`,
  };
  const USERS = {
    admin: { name: `${PREFIX}-admin`, password: 'Admin-Pa55word!', groups: [] as string[] },
    tom: { name: `${PREFIX}-tom`, password: 'Tom-Pa55word!', groups: [] as string[] },
    nora: { name: `${PREFIX}-nora`, password: 'Nora-Pa55word!', groups: [] as string[] },
  };
  type Who = keyof typeof USERS;
  const g = tenantGroups(P);
  const CREATOR = `${P}.io/creator`;
  const ORPHAN = `orphan.finalizers.${P}.io`;
  /** A finalizer as the reconciler sets on the namespaces it has bound a creator in. */
  const MARKER = `finalizers.${P}.io/namespaces`;

  const template = (name: string, extra: Record<string, unknown> = {}) => ({
    metadata: { name, annotations: { [CREATOR]: 'someone-else' } },
    spec: { template: { spec: { manager: USERS.admin.name } } },
    ...extra,
  });
  const namespaceBody = (name: string, labels: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels, annotations: { [CREATOR]: 'someone-else' } },
  });

  const storedTemplate = async (name: string): Promise<Obj | undefined> => {
    try {
      return (await objects.getClusterCustomObject({ ...g.templates, name })) as Obj;
    } catch {
      return undefined;
    }
  };
  const storedNamespace = async (name: string): Promise<Obj | undefined> => {
    try {
      return (await core.readNamespace({ name })) as unknown as Obj;
    } catch {
      return undefined;
    }
  };

  describe(`tenant writes on the real kube-apiserver (${profile.name}): workspaces and their namespaces`, () => {
    let server: ServerProcess;
    let openapi: OpenApiConformance;
    const tokens = {} as Record<Who, string>;
    const tenant = `/kapis/tenant.${P}.io`;

    /** A request as `who`, its response checked against the OpenAPI document; the body parsed. */
    const call = async (
      who: Who,
      method: string,
      path: string,
      body?: unknown,
      contentType = 'application/json',
    ): Promise<{ status: number; body: Obj & StatusBody & { items?: Obj[] } }> => {
      const init: RequestInit = { method, headers: { Authorization: `Bearer ${tokens[who]}` } };
      if (body !== undefined) {
        init.body = typeof body === 'string' ? body : JSON.stringify(body);
        init.headers = { ...init.headers, 'Content-Type': contentType };
      }
      const { res, body: text } = await openapi.fetch(`${server.url}${tenant}${path}`, init);
      return { status: res.status, body: JSON.parse(text) as Obj & StatusBody };
    };

    before(async () => {
      await installIamCrds(kc, P);
      await profile.install(kc, P);
      await deleteUsersAndSessions(
        kc,
        Object.values(USERS).map((u) => u.name),
        P,
      );
      for (const user of Object.values(USERS)) await createUser(kc, user, P);
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: `${PREFIX}-admin` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USERS.admin.name }],
        },
      });
      // Tom may create projects in workspace one only: RBAC on that workspace's namespaces subresource.
      await rbac.createClusterRole({
        body: {
          metadata: { name: `${PREFIX}-one-projects` },
          rules: [
            {
              apiGroups: [g.templates.group],
              resources: ['workspaces/namespaces'],
              resourceNames: [WS.one],
              verbs: ['create'],
            },
          ],
        },
      });
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: `${PREFIX}-tom` },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: `${PREFIX}-one-projects`,
          },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USERS.tom.name }],
        },
      });
      server = await startReadyServer([
        `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
        `--platformName=${P}`,
        '--auth.addressRequestsPerMinute=0',
        // The API's writes alone: what the tenant reconciler makes of them is tenant-reconciler.test.ts's.
        '--leaderElection.enabled=false',
      ]);
      openapi = await OpenApiConformance.fromServer(server.url);
      for (const who of Object.keys(USERS) as Who[]) {
        const user = USERS[who];
        const res = await passwordLogin(server.url, user.name, user.password, { id: P, secret: P });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        tokens[who] = String(res.body['access_token']);
      }
    });

    after(async () => {
      await server?.stop();
      // Finalizers this file's deletes left (no reconciler runs against this platform name's objects).
      for (const name of Object.values(WS)) {
        const found = await storedTemplate(name);
        if (found?.metadata.finalizers?.length)
          await objects.patchClusterCustomObject(
            { ...g.templates, name, body: [{ op: 'remove', path: '/metadata/finalizers' }] },
            undefined,
          );
      }
      await deleteWorkspaces(kc, P, Object.values(WS));
      await deleteUsersAndSessions(
        kc,
        Object.values(USERS).map((u) => u.name),
        P,
      );
      for (const name of [`${PREFIX}-admin`, `${PREFIX}-tom`])
        await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: `${PREFIX}-one-projects` }).catch(() => undefined);
    });

    test('create a workspace template on both paths: kind filled in, the creator set by the server', async () => {
      const created = await call('admin', 'POST', '/v1alpha3/workspacetemplates', template(WS.one));
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.kind, 'WorkspaceTemplate');
      assert.equal(created.body.apiVersion, `${g.templates.group}/v1alpha2`);
      assert.equal(created.body.metadata.annotations?.[CREATOR], USERS.admin.name, 'not the forged one');
      assert.equal((await storedTemplate(WS.one))?.metadata.annotations?.[CREATOR], USERS.admin.name);

      for (const ws of [WS.two, WS.orphan, WS.gone]) {
        const v1alpha2 = await call('admin', 'POST', '/v1alpha2/workspaces', template(ws));
        assert.equal(v1alpha2.status, 200, JSON.stringify(v1alpha2.body));
      }
      const again = await call('admin', 'POST', '/v1alpha3/workspacetemplates', template(WS.one));
      assert.equal(again.status, 409);
      assert.deepEqual([again.body.kind, again.body.reason], ['Status', 'AlreadyExists']);
    });

    test('bad input: a clear Status naming what was wrong, and nothing written', async () => {
      const name = `${PREFIX}-bad`;
      const cases: [string, unknown, string, number, RegExp][] = [
        ['malformed JSON', '{"metadata": {', 'application/json', 400, /not valid JSON/],
        ['not an object', '[1, 2]', 'application/json', 400, /must be a WorkspaceTemplate object/],
        [
          'another kind',
          { ...template(name), kind: 'Namespace' },
          'application/json',
          400,
          /^kind: must be "WorkspaceTemplate"/,
        ],
        [
          'another apiVersion',
          { ...template(name), apiVersion: 'v1' },
          'application/json',
          400,
          /^apiVersion: /,
        ],
        ['no name', { metadata: {} }, 'application/json', 400, /^metadata.name: is required/],
        [
          'a name that is not DNS-1123',
          template('Bad_Name'),
          'application/json',
          400,
          /^metadata.name: "Bad_Name" is not a DNS-1123 label/,
        ],
        [
          'a manager that is not a string',
          { ...template(name), spec: { template: { spec: { manager: 7 } } } },
          'application/json',
          400,
          /^spec.template.spec.manager: /,
        ],
        [
          'another media type',
          'name=x',
          'application/x-www-form-urlencoded',
          415,
          /not supported here; send application\/json/,
        ],
        [
          'a body over 256 KiB',
          template(name, { padding: 'x'.repeat(300 * 1024) }),
          'application/json',
          413,
          /too large/,
        ],
      ];
      for (const [what, body, type, code, message] of cases) {
        const res = await call('admin', 'POST', '/v1alpha3/workspacetemplates', body, type);
        assert.equal(res.status, code, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`);
        assert.equal(res.body.kind, 'Status', what);
        assert.match(res.body.message, message, what);
      }
      const named = await call('admin', 'POST', '/v1alpha3/workspacetemplates', template('Bad_Name'));
      assert.equal(named.body.details?.causes?.[0]?.field, 'metadata.name');
      assert.equal(await storedTemplate(name), undefined, 'nothing was created');
    });

    test('writes need Kubernetes RBAC: a caller without it gets 403 and nothing changes', async () => {
      const denied = await call('tom', 'POST', '/v1alpha3/workspacetemplates', template(`${PREFIX}-toms`));
      assert.equal(denied.status, 403);
      assert.match(denied.body.message, /cannot create resource "workspacetemplates"/);
      assert.equal(await storedTemplate(`${PREFIX}-toms`), undefined);
      for (const [method, body] of [
        ['PUT', template(WS.one)],
        ['PATCH', { metadata: { labels: { x: 'y' } } }],
        ['DELETE', undefined],
      ] as const) {
        const res = await call('tom', method, `/v1alpha3/workspacetemplates/${WS.one}`, body);
        assert.equal(res.status, 403, method);
      }
      assert.ok(await storedTemplate(WS.one), 'still there');
      assert.equal((await storedTemplate(WS.one))?.metadata.labels?.['x'], undefined);
    });

    test('replace and patch a template: a stale resourceVersion is a 409, the creator is kept', async () => {
      const current = (await storedTemplate(WS.one))!;
      const stale = { ...template(WS.one), metadata: { name: WS.one, resourceVersion: '1' } };
      const conflict = await call('admin', 'PUT', `/v1alpha3/workspacetemplates/${WS.one}`, stale);
      assert.equal(conflict.status, 409, JSON.stringify(conflict.body));
      assert.equal(conflict.body.reason, 'Conflict');

      const mismatch = await call('admin', 'PUT', `/v1alpha3/workspacetemplates/${WS.one}`, template(WS.two));
      assert.equal(mismatch.status, 400);
      assert.match(mismatch.body.message, /does not match the name on the URL/);

      const replaced = await call('admin', 'PUT', `/v1alpha3/workspacetemplates/${WS.one}`, {
        metadata: {
          name: WS.one,
          resourceVersion: current.metadata.resourceVersion,
          labels: { tier: 'gold' },
        },
        spec: { template: { spec: { manager: USERS.tom.name } } },
      });
      assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
      assert.equal(replaced.body.metadata.labels?.['tier'], 'gold');
      assert.equal(replaced.body.metadata.annotations?.[CREATOR], USERS.admin.name);

      const merged = await call(
        'admin',
        'PATCH',
        `/v1alpha2/workspaces/${WS.one}`,
        { metadata: { annotations: { [`${P}.io/alias-name`]: 'One' } } },
        'application/merge-patch+json',
      );
      assert.equal(merged.status, 200, JSON.stringify(merged.body));
      assert.equal(merged.body.metadata.annotations?.[`${P}.io/alias-name`], 'One');
      assert.equal(merged.body.metadata.labels?.['tier'], 'gold');
      // A JSON patch, sent as the original's clients send it (application/json with an array).
      const jsonPatched = await call('admin', 'PATCH', `/v1alpha3/workspacetemplates/${WS.one}`, [
        { op: 'replace', path: '/metadata/labels/tier', value: 'silver' },
      ]);
      assert.equal(jsonPatched.status, 200, JSON.stringify(jsonPatched.body));
      assert.equal((await storedTemplate(WS.one))?.metadata.labels?.['tier'], 'silver');
      const failing = await call('admin', 'PATCH', `/v1alpha3/workspacetemplates/${WS.one}`, [
        { op: 'remove', path: '/metadata/labels/none' },
      ]);
      assert.equal(failing.status, 400);
      assert.match(failing.body.message, /invalid patch: operation 0 \(remove \/metadata\/labels\/none\)/);
      const missing = await call('admin', 'PATCH', `/v1alpha3/workspacetemplates/${PREFIX}-none`, {});
      assert.equal(missing.status, 404);
    });

    test('create a project: the workspace label and creator are the server’s; who may, where', async () => {
      const ns = `${PREFIX}-p1`;
      const created = await call(
        'admin',
        'POST',
        `/v1alpha2/workspaces/${WS.one}/namespaces`,
        namespaceBody(ns),
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const stored = await storedNamespace(ns);
      assert.equal(stored?.metadata.labels?.[g.workspaceLabel], WS.one);
      assert.equal(stored?.metadata.annotations?.[CREATOR], USERS.admin.name);

      const other = await call(
        'admin',
        'POST',
        `/v1alpha2/workspaces/${WS.one}/namespaces`,
        namespaceBody(`${PREFIX}-p2`, { [g.workspaceLabel]: WS.two }),
      );
      assert.equal(other.status, 400);
      assert.match(
        other.body.message,
        new RegExp(`names workspace "${WS.two}", but the namespace is created in workspace "${WS.one}"`),
      );
      const unknown = await call(
        'admin',
        'POST',
        `/v1alpha2/workspaces/${PREFIX}-none/namespaces`,
        namespaceBody(`${PREFIX}-p2`),
      );
      assert.equal(unknown.status, 404);
      assert.match(unknown.body.message, new RegExp(`workspace "${PREFIX}-none" not found`));
      const duplicate = await call(
        'admin',
        'POST',
        `/v1alpha2/workspaces/${WS.one}/namespaces`,
        namespaceBody(ns),
      );
      assert.equal(duplicate.status, 409);
      const badName = await call(
        'admin',
        'POST',
        `/v1alpha2/workspaces/${WS.one}/namespaces`,
        namespaceBody('a.b'),
      );
      assert.equal(badName.status, 400);
      assert.equal(await storedNamespace(`${PREFIX}-p2`), undefined, 'nothing half made');

      // Tom: RBAC lets him create projects in workspace one only.
      const toms = await call(
        'tom',
        'POST',
        `/v1alpha2/workspaces/${WS.one}/namespaces`,
        namespaceBody(`${PREFIX}-tp`),
      );
      assert.equal(toms.status, 200, JSON.stringify(toms.body));
      assert.equal((await storedNamespace(`${PREFIX}-tp`))?.metadata.annotations?.[CREATOR], USERS.tom.name);
      const elsewhere = await call(
        'tom',
        'POST',
        `/v1alpha2/workspaces/${WS.two}/namespaces`,
        namespaceBody(`${PREFIX}-tq`),
      );
      assert.equal(elsewhere.status, 403);
      assert.match(elsewhere.body.message, new RegExp(`cannot create namespaces in workspace "${WS.two}"`));
      const nora = await call(
        'nora',
        'POST',
        `/v1alpha2/workspaces/${WS.one}/namespaces`,
        namespaceBody(`${PREFIX}-nq`),
      );
      assert.equal(nora.status, 403);
      assert.equal(await storedNamespace(`${PREFIX}-tq`), undefined);
    });

    test('update, patch and move a project; a member’s projects; delete', async () => {
      const ns = `${PREFIX}-p1`;
      const path = `/v1alpha2/workspaces/${WS.one}/namespaces/${ns}`;
      const patched = await call(
        'admin',
        'PATCH',
        path,
        { metadata: { labels: { env: 'dev' } } },
        'application/merge-patch+json',
      );
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal(patched.body.metadata.labels?.['env'], 'dev');
      assert.equal(patched.body.metadata.labels?.[g.workspaceLabel], WS.one);

      // Replaced without the label, the creator or the finalizers (the reconciler's marker): all stay.
      await core.patchNamespace(
        { name: ns, body: [{ op: 'add', path: '/metadata/finalizers', value: [MARKER] }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      const current = (await storedNamespace(ns))!;
      const replaced = await call('admin', 'PUT', path, {
        metadata: { name: ns, resourceVersion: current.metadata.resourceVersion, labels: { env: 'prod' } },
      });
      assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
      assert.equal(replaced.body.metadata.labels?.[g.workspaceLabel], WS.one);
      assert.equal(replaced.body.metadata.annotations?.[CREATOR], USERS.admin.name);
      assert.deepEqual(replaced.body.metadata.finalizers, [MARKER]);
      await core.patchNamespace(
        { name: ns, body: [{ op: 'remove', path: '/metadata/finalizers' }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      const stale = await call('admin', 'PUT', path, {
        metadata: { name: ns, resourceVersion: current.metadata.resourceVersion },
      });
      assert.equal(stale.status, 409);

      // Tom may not move his project to a workspace where he may not create projects.
      const tomsPath = `/v1alpha2/workspaces/${WS.one}/namespaces/${PREFIX}-tp`;
      const move = { metadata: { labels: { [g.workspaceLabel]: WS.two } } };
      // He may not patch the namespace at all yet: no role in it (no reconciler runs here).
      assert.equal((await call('tom', 'PATCH', tomsPath, move, 'application/merge-patch+json')).status, 403);
      const moved = await call('admin', 'PATCH', path, move, 'application/merge-patch+json');
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.equal((await storedNamespace(ns))?.metadata.labels?.[g.workspaceLabel], WS.two);
      // Reads come from the watch-backed caches: the move shows as soon as the watch delivers it.
      await waitFor('the move seen by the read routes', async () =>
        (await call('admin', 'GET', path)).status === 404 &&
        (await call('admin', 'GET', `/v1alpha2/workspaces/${WS.two}/namespaces/${ns}`)).status === 200
          ? true
          : undefined,
      );

      // A member's projects: the admin may ask about anyone, Nora only about herself.
      const toms = await call(
        'admin',
        'GET',
        `/v1alpha2/workspaces/${WS.one}/workspacemembers/${USERS.tom.name}/namespaces`,
      );
      assert.equal(toms.status, 200);
      assert.deepEqual(toms.body.items, [], 'Tom has no role in any project yet');
      assert.equal(
        (
          await call(
            'nora',
            'GET',
            `/v1alpha2/workspaces/${WS.one}/workspacemembers/${USERS.tom.name}/namespaces`,
          )
        ).status,
        403,
      );
      assert.equal(
        (
          await call(
            'nora',
            'GET',
            `/v1alpha2/workspaces/${WS.one}/workspacemembers/${USERS.nora.name}/namespaces`,
          )
        ).status,
        200,
      );

      const wrongPlace = await call('admin', 'DELETE', `/v1alpha2/workspaces/${WS.one}/namespaces/${ns}`, {});
      assert.equal(wrongPlace.status, 404);
      assert.equal((await call('tom', 'DELETE', tomsPath)).status, 403);
      const deleted = await call('admin', 'DELETE', `/v1alpha2/workspaces/${WS.two}/namespaces/${ns}`, {});
      assert.equal(deleted.status, 200);
      assert.deepEqual(deleted.body, { message: 'success' });
      // Without a namespace controller here, the namespace stays Terminating.
      const terminating = await storedNamespace(ns);
      assert.ok(terminating === undefined || terminating.metadata.deletionTimestamp);
      assert.equal((await call('admin', 'DELETE', tomsPath)).status, 200);
    });

    test('delete a template: plainly, or with propagationPolicy Orphan recorded as its finalizer', async () => {
      const bad = await call('admin', 'DELETE', `/v1alpha3/workspacetemplates/${WS.gone}`, {
        propagationPolicy: 'Later',
      });
      assert.equal(bad.status, 400);
      assert.match(bad.body.message, /^propagationPolicy: must be one of Orphan, Background, Foreground/);
      assert.ok(await storedTemplate(WS.gone));

      const gone = await call('admin', 'DELETE', `/v1alpha3/workspacetemplates/${WS.gone}`);
      assert.equal(gone.status, 200);
      assert.deepEqual(gone.body, { message: 'success' });
      assert.equal(await storedTemplate(WS.gone), undefined);
      assert.equal(
        (await call('admin', 'DELETE', `/v1alpha3/workspacetemplates/${WS.gone}`, {})).status,
        404,
      );

      const orphaned = await call('admin', 'DELETE', `/v1alpha2/workspaces/${WS.orphan}`, {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        propagationPolicy: 'Orphan',
      });
      assert.equal(orphaned.status, 200, JSON.stringify(orphaned.body));
      const terminating = await storedTemplate(WS.orphan);
      assert.ok(terminating?.metadata.deletionTimestamp, 'being deleted');
      assert.ok(
        terminating?.metadata.finalizers?.includes(ORPHAN),
        'the reconciler is told to orphan its namespaces',
      );
    });
  });
}
