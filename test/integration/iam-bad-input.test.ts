// Bad input on every write route of the IAM API (issue 33 §3): malformed JSON, another kind, names that
// are not DNS-1123, an invalid e-mail, a weak password, a duplicate (409) and a body over the limit
// (413), each answered with a Status naming the field — and nothing written: every object the routes
// could touch is fingerprinted (name → resourceVersion) before and after the whole run, and must be the
// same. Both profiles; the caller is a Kubernetes cluster-admin, so nothing is refused for want of rights.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ApiException, CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { decodeLedger } from '../../src/users/attempt-ledger.ts';
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
const PASSWORD = 'BadInput-Pa55word!';
const RBAC_GROUP = 'rbac.authorization.k8s.io';
const KIB = 1024;

const ignore404 = (err: unknown) => {
  if (!(err instanceof ApiException && err.code === 404)) throw err;
};

/** One bad request and the Status it must get: the code, and the field named (400) or the message. */
interface Case {
  name: string;
  method: 'POST' | 'PUT' | 'PATCH';
  path: string;
  body?: unknown;
  /** Sent as is (malformed JSON, a huge body). */
  raw?: string;
  contentType?: string;
  code: number;
  field?: string;
  message?: RegExp;
}

const MALFORMED = '{"metadata": {"name": ';
const oversized = (kib: number) => JSON.stringify({ filler: 'x'.repeat(kib * KIB) });

const profiles = iamProfiles(kc, { original: 'badinput', ours: 'badinputbare' });

for (const profile of profiles) {
  describe(`bad input on the IAM writes: ${profile.title}`, () => {
    const P = profile.platform;
    const tag = profile.original ? 'bi' : 'bib';
    const ADMIN = `${tag}-admin-${sfx}`;
    const ALICE = `${tag}-alice-${sfx}`;
    const USERS = [ADMIN, ALICE];
    const WS = `${tag}-ws-${sfx}`;
    const NS = `${tag}-ns-${sfx}`;
    const CLUSTER_ROLE = `${tag}-role-${sfx}`;
    const GLOBAL_ROLE = `${tag}-global-${sfx}`;
    const IAM = { group: `iam.${P}.io`, version: 'v1alpha2' };
    const iamVersion = `${IAM.group}/${IAM.version}`;
    const WS_LABEL = `${P}.io/workspace`;
    let server: ServerProcess;
    let accessToken = '';
    let group = '';

    const call = async (method: string, path: string, body?: unknown, raw?: string, contentType?: string) => {
      const res = await fetch(`${server.url}/kapis/iam.${P}.io/v1alpha2/${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${accessToken}`,
          'Content-Type': contentType ?? 'application/json',
        },
        body: raw ?? JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, text };
    };

    /** name → resourceVersion of everything the write routes could touch in this file's scopes. */
    const fingerprint = async () => {
      const seen: Record<string, string> = {};
      const add = (kind: string, items: { metadata?: { name?: string; resourceVersion?: string } }[]) => {
        for (const i of items) seen[`${kind}/${i.metadata?.name}`] = i.metadata?.resourceVersion ?? '';
      };
      const iam = async (plural: string) =>
        (
          await kubeRequest<{ items: { metadata: { name: string; resourceVersion: string } }[] }>(
            kc,
            `/apis/${IAM.group}/${IAM.version}/${plural}`,
            { timeoutMs: 10_000 },
          ).catch(() => ({ items: [] }))
        ).items.filter((i) => i.metadata.name.includes(sfx) || i.metadata.name.startsWith('dup'));
      for (const plural of [
        'users',
        'globalroles',
        'globalrolebindings',
        'workspaceroles',
        'workspacerolebindings',
        'groups',
        'groupbindings',
      ])
        add(plural, await iam(plural));
      add('roles', (await rbac.listNamespacedRole({ namespace: NS })).items);
      add('rolebindings', (await rbac.listNamespacedRoleBinding({ namespace: NS })).items);
      add(
        'clusterroles',
        (await rbac.listClusterRole()).items.filter((r) => r.metadata?.name?.includes(sfx)),
      );
      add(
        'clusterrolebindings',
        (await rbac.listClusterRoleBinding()).items.filter((r) => r.metadata?.name?.includes(sfx)),
      );
      return seen;
    };

    const cleanup = async () => {
      await server?.stop();
      for (const name of [`${ADMIN}-cluster-admin`])
        await rbac.deleteClusterRoleBinding({ name }).catch(ignore404);
      await rbac.deleteClusterRole({ name: CLUSTER_ROLE }).catch(ignore404);
      if (profile.original)
        await objects
          .deleteClusterCustomObject({ ...IAM, plural: 'globalroles', name: GLOBAL_ROLE })
          .catch(ignore404);
      for (const plural of ['groupbindings', 'groups'])
        for (const item of (
          (await objects
            .listClusterCustomObject({ ...IAM, plural, labelSelector: `${WS_LABEL}=${WS}` })
            .catch(() => ({ items: [] }))) as { items: { metadata: { name: string } }[] }
        ).items)
          await objects
            .deleteClusterCustomObject({ ...IAM, plural, name: item.metadata.name })
            .catch(ignore404);
      await deleteWorkspaces(kc, P, [WS]);
      await objects
        .deleteClusterCustomObject({ ...IAM, plural: 'workspaceroles', name: `${WS}-viewer` })
        .catch(ignore404);
      await core.deleteNamespace({ name: NS }).catch(ignore404);
      await deleteUsersAndSessions(kc, USERS, P);
    };

    before(async () => {
      await profile.install(P);
      await cleanup();
      for (const name of USERS)
        await createUser(kc, { name, password: PASSWORD, groups: [], email: `${name}@bad.example` }, P);
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: `${ADMIN}-cluster-admin` },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: ADMIN }],
        },
      });
      await rbac.createClusterRole({ body: { metadata: { name: CLUSTER_ROLE }, rules: [] } });
      if (profile.original)
        await objects.createClusterCustomObject({
          ...IAM,
          plural: 'globalroles',
          body: { apiVersion: iamVersion, kind: 'GlobalRole', metadata: { name: GLOBAL_ROLE }, rules: [] },
        });
      await createWorkspace(kc, P, WS);
      await createWorkspaceNamespace(kc, P, WS, NS);
      await bindWorkspaceMember(kc, P, WS, { kind: 'User', name: ALICE });
      await objects.createClusterCustomObject({
        ...IAM,
        plural: 'workspaceroles',
        body: {
          apiVersion: iamVersion,
          kind: 'WorkspaceRole',
          metadata: { name: `${WS}-viewer`, labels: { [WS_LABEL]: WS } },
          rules: [],
        },
      });
      await rbac.createNamespacedRole({ namespace: NS, body: { metadata: { name: 'viewer' }, rules: [] } });
      server = await startReadyServer([
        `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
        `--platformName=${P}`,
        '--auth.addressRequestsPerMinute=0',
        '--leaderElection.enabled=false',
      ]);
      const login = await passwordLogin(server.url, ADMIN, PASSWORD, { id: P, secret: P });
      assert.equal(login.status, 200, JSON.stringify(login.body));
      accessToken = String(login.body['access_token']);
      // The login's own writes to the administrator's User (its settlement may ride along with a later
      // write, and the last-login time) land after the answer: once, before the fingerprint is taken.
      await waitFor("the login's writes to the administrator", async () => {
        const user = (await objects.getClusterCustomObject({ ...IAM, plural: 'users', name: ADMIN })) as {
          metadata: { annotations?: Record<string, string> };
          status?: { lastLoginTime?: string };
        };
        const ledger = user.metadata.annotations?.[`${IAM.group}/login-attempts`];
        const settled = Object.keys(decodeLedger(ledger).pending).length === 0;
        return settled && user.status?.lastLoginTime !== undefined ? true : undefined;
      });
      // What the duplicates collide with: a group, Alice in it, its workspace role and its project role.
      const made = await call('POST', `workspaces/${WS}/groups`, { metadata: { generateName: 'dup' } });
      assert.equal(made.status, 200, made.text);
      group = (JSON.parse(made.text) as { metadata: { name: string } }).metadata.name;
      for (const [path, body] of [
        [`workspaces/${WS}/groupbindings`, [{ userName: ALICE, groupName: group }]],
        [
          `workspaces/${WS}/workspacerolebindings`,
          [{ subjects: [{ kind: 'Group', name: group }], roleRef: { name: `${WS}-viewer` } }],
        ],
        [
          `namespaces/${NS}/rolebindings`,
          [{ subjects: [{ kind: 'Group', name: group }], roleRef: { kind: 'Role', name: 'viewer' } }],
        ],
      ] as const) {
        const res = await call('POST', path, body);
        assert.equal(res.status, 200, `${path}: ${res.text}`);
      }
    });
    after(cleanup);

    /** The cases of every route: the shared ones (malformed, too large) and each route's own. */
    function cases(): Case[] {
      const list: Case[] = [];
      const route = (
        method: Case['method'],
        path: string,
        limitKib: number,
        own: Omit<Case, 'method' | 'path'>[],
        contentType?: string,
      ) => {
        const ct = contentType ? { contentType } : {};
        list.push({
          name: 'malformed JSON',
          method,
          path,
          raw: MALFORMED,
          code: 400,
          message: /not valid JSON/,
          ...ct,
        });
        list.push({
          name: 'over the limit',
          method,
          path,
          raw: oversized(limitKib + 1),
          code: 413,
          message: /too large/,
          ...ct,
        });
        for (const c of own) list.push({ method, path, ...ct, ...c });
      };
      const user = (name: string, spec: Record<string, unknown> = {}, kind = 'User') => ({
        apiVersion: iamVersion,
        kind,
        metadata: { name },
        spec: { email: `${name}@bad.example`, password: PASSWORD, ...spec },
      });
      const fresh = `${tag}-fresh-${sfx}`;
      route('POST', 'users', 64, [
        { name: 'another kind', body: user(fresh, {}, 'Group'), code: 400, field: 'kind' },
        { name: 'a name not DNS-1123', body: user('Fresh_User'), code: 400, field: 'metadata.name' },
        {
          name: 'an invalid email',
          body: user(fresh, { email: 'not-an-address' }),
          code: 400,
          field: 'spec.email',
        },
        {
          name: 'a weak password',
          body: user(fresh, { password: 'password' }),
          code: 400,
          field: 'spec.password',
        },
        { name: 'a duplicate', body: user(ALICE), code: 409, message: /already exists/ },
      ]);
      route('PUT', `users/${ALICE}`, 64, [
        { name: 'another kind', body: user(ALICE, {}, 'Group'), code: 400, field: 'kind' },
        { name: 'an invalid email', body: user(ALICE, { email: 'a@b' }), code: 400, field: 'spec.email' },
        { name: 'another name', body: user(fresh), code: 400, field: 'metadata.name' },
      ]);
      route('PUT', `users/${ALICE}/password`, 64, [
        { name: 'a weak password', body: { password: 'short1A' }, code: 400, field: 'password' },
        { name: 'no password', body: {}, code: 400, field: 'password' },
      ]);
      const roleScopes: [string, string, string][] = [
        ['clusterroles', 'ClusterRole', CLUSTER_ROLE],
        [`namespaces/${NS}/roles`, 'Role', 'viewer'],
        [`workspaces/${WS}/workspaceroles`, 'WorkspaceRole', `${WS}-viewer`],
        ...(profile.original
          ? ([['globalroles', 'GlobalRole', GLOBAL_ROLE]] as [string, string, string][])
          : []),
      ];
      for (const [path, kind, existing] of roleScopes) {
        const role = (name: string, k = kind, rules: unknown = []) => ({
          kind: k,
          metadata: { name },
          rules,
        });
        route('POST', path, 256, [
          { name: 'another kind', body: role(fresh, 'Secret'), code: 400, field: 'kind' },
          { name: 'a name not DNS-1123', body: role('Bad_Role'), code: 400, field: 'metadata.name' },
          { name: 'rules not a list', body: role(fresh, kind, 'all'), code: 400, field: 'rules' },
          { name: 'a duplicate', body: role(existing), code: 409, message: /already exists/ },
        ]);
        route('PUT', `${path}/${existing}`, 256, [
          { name: 'another kind', body: role(existing, 'Secret'), code: 400, field: 'kind' },
          { name: 'another name', body: role(fresh), code: 400, field: 'metadata.name' },
        ]);
        route(
          'PATCH',
          `${path}/${existing}`,
          256,
          [
            { name: 'not an object', body: ['rules'], code: 400, field: '' },
            { name: 'another kind', body: { kind: 'Secret' }, code: 400, field: 'kind' },
          ],
          'application/merge-patch+json',
        );
      }
      const memberScopes: [string, string][] = [
        ['clustermembers', CLUSTER_ROLE],
        [`namespaces/${NS}/members`, 'viewer'],
        [`workspaces/${WS}/workspacemembers`, `${WS}-viewer`],
      ];
      for (const [path, role] of memberScopes) {
        route('POST', path, 256, [
          { name: 'not a list', body: { username: ALICE, roleRef: role }, code: 400, field: '' },
          {
            name: 'a name not DNS-1123',
            body: [{ username: 'Alice_X', roleRef: role }],
            code: 400,
            field: '[0].username',
          },
          { name: 'no role', body: [{ username: ALICE }], code: 400, field: '[0].roleRef' },
          {
            name: 'a user twice',
            body: [
              { username: ALICE, roleRef: role },
              { username: ALICE, roleRef: role },
            ],
            code: 400,
            field: '[1].username',
          },
        ]);
        route('PUT', `${path}/${ALICE}`, 256, [
          {
            name: 'a name not DNS-1123',
            body: { username: 'Alice_X', roleRef: role },
            code: 400,
            field: 'username',
          },
          { name: 'a list', body: [{ username: ALICE, roleRef: role }], code: 400, field: '' },
        ]);
      }
      const groupPath = `workspaces/${WS}/groups`;
      route('POST', groupPath, 256, [
        {
          name: 'another kind',
          body: { kind: 'User', metadata: { generateName: 'x' } },
          code: 400,
          field: 'kind',
        },
        {
          name: 'a name not DNS-1123',
          body: { metadata: { generateName: 'Bad_' } },
          code: 400,
          field: 'metadata.generateName',
        },
        {
          name: 'labels not strings',
          body: { metadata: { generateName: 'x', labels: { a: 1 } } },
          code: 400,
          field: 'metadata.labels',
        },
        {
          name: 'a duplicate',
          body: { metadata: { generateName: 'dup' } },
          code: 409,
          message: /already exists in the workspace/,
        },
      ]);
      route('PUT', `${groupPath}/${group}`, 256, [
        { name: 'another kind', body: { kind: 'User', metadata: { name: group } }, code: 400, field: 'kind' },
        { name: 'another name', body: { metadata: { name: fresh } }, code: 400, field: 'metadata.name' },
      ]);
      route(
        'PATCH',
        `${groupPath}/${group}`,
        256,
        [
          { name: 'not an object', body: [1], code: 400, field: '' },
          { name: 'another kind', body: { kind: 'User' }, code: 400, field: 'kind' },
        ],
        'application/merge-patch+json',
      );
      route('POST', `workspaces/${WS}/groupbindings`, 256, [
        { name: 'not a list', body: { userName: ALICE, groupName: group }, code: 400, field: '' },
        {
          name: 'a name not DNS-1123',
          body: [{ userName: 'Alice_X', groupName: group }],
          code: 400,
          field: '[0].userName',
        },
        { name: 'no group', body: [{ userName: ALICE }], code: 400, field: '[0].groupName' },
        {
          name: 'a duplicate',
          body: [{ userName: ALICE, groupName: group }],
          code: 409,
          message: /already a member/,
        },
      ]);
      const binding = (kind: string, subject: Record<string, unknown>, role: string) => ({
        kind,
        subjects: [subject],
        roleRef: { name: role },
      });
      for (const [path, kind, role] of [
        [`workspaces/${WS}/workspacerolebindings`, 'WorkspaceRoleBinding', `${WS}-viewer`],
        [`namespaces/${NS}/rolebindings`, 'RoleBinding', 'viewer'],
      ] as const) {
        route('POST', path, 256, [
          {
            name: 'another kind',
            body: [binding('Secret', { kind: 'Group', name: group }, role)],
            code: 400,
            field: '[0].kind',
          },
          {
            name: 'another subject kind',
            body: [binding(kind, { kind: 'ServiceAccount', name: 'default' }, role)],
            code: 400,
            field: '[0].subjects[0].kind',
          },
          {
            name: 'a name not DNS-1123',
            body: [binding(kind, { kind: 'Group', name: 'system:masters' }, role)],
            code: 400,
            field: '[0].subjects[0].name',
          },
          {
            name: 'no subjects',
            body: [{ kind, subjects: [], roleRef: { name: role } }],
            code: 400,
            field: '[0].subjects',
          },
          {
            name: 'a duplicate',
            body: [binding(kind, { kind: 'Group', name: group }, role)],
            code: 409,
            message: /already bound/,
          },
        ]);
      }
      return list;
    }

    test('every write route answers each bad request with a Status naming the field, and writes nothing', async () => {
      // The collisions made in before() are listed by the caches the duplicate checks read.
      await waitFor('the duplicates in the caches', async () => {
        const res = await call('GET', `workspaces/${WS}/groupbindings`);
        return res.status === 200 && (JSON.parse(res.text) as { totalItems: number }).totalItems === 1
          ? true
          : undefined;
      });
      const before = await fingerprint();
      const wrong: string[] = [];
      const all = cases();
      for (const c of all) {
        const res = await call(c.method, c.path, c.body, c.raw, c.contentType);
        const what = `${c.method} ${c.path} (${c.name})`;
        let status: {
          kind?: string;
          code?: number;
          message?: string;
          details?: { causes?: { field?: string }[] };
        };
        try {
          status = JSON.parse(res.text) as typeof status;
        } catch {
          wrong.push(`${what}: ${res.status}, not JSON: ${res.text.slice(0, 200)}`);
          continue;
        }
        const fields = (status.details?.causes ?? []).map((cause) => cause.field);
        if (
          res.status !== c.code ||
          status.kind !== 'Status' ||
          status.code !== c.code ||
          (c.field !== undefined && !fields.includes(c.field)) ||
          (c.message !== undefined && !c.message.test(status.message ?? ''))
        )
          wrong.push(
            `${what}: expected ${c.code}${c.field !== undefined ? ` naming "${c.field}"` : ''}, got ${res.status} ${res.text.slice(0, 300)}`,
          );
      }
      assert.deepEqual(
        wrong,
        [],
        `${wrong.length} of ${all.length} bad requests were not refused as they should be`,
      );
      assert.ok(all.length > 80, String(all.length));
      assert.deepEqual(await fingerprint(), before, 'a refused request wrote something');
    });
  });
}
