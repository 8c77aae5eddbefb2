// The tenant API's pages as the original's console asks for them, through the real server on a private
// real control plane with W workspaces and P projects (namespaces labelled with their workspace): the
// workspace list for a platform administrator and for a member of a few workspaces, and a workspace's
// project list; beside them, the kube-apiserver answering the nearest equivalent (a LIST page). Then the
// time from creating a project through the API to its creator being allowed to work in it (a
// SubjectAccessReview as the creator says allowed), which the reconciler's default roles decide.
// Prints figures; asserts nothing.
//   source scripts/ensure-node.sh && node test/bench/tenant.bench.ts [--workspaces=500] [--projects=5000]
//     [--requests=200] [--rounds=3] [--creates=50]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { hashPassword } from '../../src/users/passwords.ts';
import { startControlPlane } from '../cluster/control-plane.ts';
import { adminKubeConfig, generateTestKeys, installIamCrds, passwordLogin } from '../support/iam-fixtures.ts';
import { installTenantCrds, tenantGroups } from '../support/tenant-fixtures.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { startRealServer } from './real-server.ts';
import { inBatches, measureSequential, percentile } from './sequential-latency.ts';

const flag = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const WORKSPACES = flag('workspaces', 500);
const PROJECTS = flag('projects', 5000);
const REQUESTS = flag('requests', 200);
const ROUNDS = flag('rounds', 3);
const CREATES = flag('creates', 50);
const PLATFORM = 'kubesphere';
const PASSWORD = 'bench-Pa55word!';
const ADMIN = 'bench-admin';
const MEMBER = 'bench-member';
const CREATOR = 'bench-creator';
/** How many workspaces the member belongs to (through WorkspaceRoleBindings, as the original's members do). */
const MEMBER_OF = 5;

const ws = (i: number) => `bench-ws-${String(i).padStart(4, '0')}`;
const measure = (call: () => Promise<Response>) =>
  measureSequential(call, { requests: REQUESTS, rounds: ROUNDS });

async function seed(kc: KubeConfig): Promise<void> {
  const g = tenantGroups(PLATFORM);
  const objects = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const hash = await hashPassword(PASSWORD);
  for (const name of [ADMIN, MEMBER, CREATOR]) {
    await objects.createClusterCustomObject({
      group: `iam.${PLATFORM}.io`,
      version: 'v1alpha2',
      plural: 'users',
      body: {
        apiVersion: `iam.${PLATFORM}.io/v1alpha2`,
        kind: 'User',
        metadata: { name },
        spec: { email: `${name}@bench.example`, password: hash, groups: [] },
      },
    });
  }
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: ADMIN },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: ADMIN }],
    },
  });
  // The creator may create projects in the first workspace only (the workspace's namespaces subresource).
  await rbac.createClusterRole({
    body: {
      metadata: { name: CREATOR },
      rules: [
        {
          apiGroups: [g.templates.group],
          resources: ['workspaces/namespaces'],
          resourceNames: [ws(0)],
          verbs: ['create'],
        },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: CREATOR },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CREATOR },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: CREATOR }],
    },
  });
  const indexes = Array.from({ length: WORKSPACES }, (_, i) => i);
  await inBatches(indexes, 25, async (i) => {
    await objects.createClusterCustomObject({
      ...g.templates,
      body: {
        apiVersion: `${g.templates.group}/${g.templates.version}`,
        kind: 'WorkspaceTemplate',
        metadata: { name: ws(i), annotations: { [`${PLATFORM}.io/creator`]: ADMIN } },
        spec: { template: { spec: { manager: ADMIN } } },
      },
    });
    if (i < MEMBER_OF)
      await objects.createClusterCustomObject({
        ...g.bindings,
        body: {
          apiVersion: `${g.bindings.group}/${g.bindings.version}`,
          kind: 'WorkspaceRoleBinding',
          metadata: {
            name: `${MEMBER}-${ws(i)}-viewer`,
            labels: { [g.workspaceLabel]: ws(i), [`iam.${PLATFORM}.io/user-ref`]: MEMBER },
          },
          roleRef: { apiGroup: g.bindings.group, kind: 'WorkspaceRole', name: `${ws(i)}-viewer` },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: MEMBER }],
        },
      });
  });
  const projects = Array.from({ length: PROJECTS }, (_, i) => i);
  await inBatches(projects, 25, (i) =>
    core.createNamespace({
      body: {
        metadata: {
          name: `bench-p-${String(i).padStart(5, '0')}`,
          labels: { [g.workspaceLabel]: ws(i % WORKSPACES) },
        },
      },
    }),
  );
}

/** Creates projects one at a time as the creator; each time, how long until RBAC lets them create a Deployment in it. */
async function creationToAccess(url: string, token: string, kc: KubeConfig): Promise<number[]> {
  const authz = kc.makeApiClient(AuthorizationV1Api);
  const times: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    const name = `bench-new-${i}`;
    const started = performance.now();
    const res = await fetch(`${url}/kapis/tenant.${PLATFORM}.io/v1alpha2/workspaces/${ws(0)}/namespaces`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name } }),
    });
    if (res.status !== 200) throw new Error(`create ${name}: HTTP ${res.status} ${await res.text()}`);
    for (;;) {
      const review = await authz.createSubjectAccessReview({
        body: {
          spec: {
            user: CREATOR,
            resourceAttributes: { verb: 'create', group: 'apps', resource: 'deployments', namespace: name },
          },
        },
      });
      if (review.status?.allowed) break;
      if (performance.now() - started > 30_000)
        throw new Error(`${name}: not usable by its creator after 30 s`);
    }
    times.push(performance.now() - started);
  }
  return times;
}

const cp = await startControlPlane();
const keys = generateTestKeys();
const dir = mkdtempSync(path.join(os.tmpdir(), 'tenant-bench-'));
try {
  const kc = adminKubeConfig(cp.kubeconfigPath);
  await installIamCrds(kc, PLATFORM);
  await installTenantCrds(kc, PLATFORM);
  const seedStart = performance.now();
  await seed(kc);
  console.log(
    `# ${WORKSPACES} workspaces, ${PROJECTS} projects (seeded in ${((performance.now() - seedStart) / 1000).toFixed(0)} s); ` +
      `${REQUESTS} sequential requests per round, ${ROUNDS} rounds, medians of p50/p99 (ms)`,
  );
  const server = await startRealServer({
    args: [
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${PLATFORM}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      '--log.access.mode=exceptions',
    ],
    dir,
    name: 'tenant',
  });
  try {
    // The steady state of a real cluster: the reconciler has given every seeded workspace and project
    // its default roles and bindings (its queue empty after it has handled keys) before anything is timed.
    const caughtUp = performance.now();
    await waitFor(
      'the tenant reconciler to catch up',
      async () => {
        const metrics = await (await fetch(`${server.url}/metrics`)).text();
        const handled = /platform_reconcile_total\{reconciler="tenant",result="success"\} (\d+)/.exec(
          metrics,
        );
        const depth = /platform_reconcile_queue_depth\{reconciler="tenant"\} (\d+)/.exec(metrics);
        return handled && Number(handled[1]) >= WORKSPACES + PROJECTS && depth?.[1] === '0'
          ? true
          : undefined;
      },
      { timeoutMs: 30 * 60_000, intervalMs: 1000 },
    );
    console.log(
      `reconciler caught up with the seeded workspaces and projects in ${((performance.now() - caughtUp) / 1000).toFixed(0)} s`,
    );
    const token = async (user: string) =>
      (await passwordLogin(server.url, user, PASSWORD, { id: PLATFORM, secret: PLATFORM })).body[
        'access_token'
      ] as string;
    const as = async (user: string) => ({ Authorization: `Bearer ${await token(user)}` });
    const admin = await as(ADMIN);
    const member = await as(MEMBER);
    const tenant = `${server.url}/kapis/tenant.${PLATFORM}.io`;
    const ours = (headers: Record<string, string>, p: string) => () => fetch(`${tenant}/${p}`, { headers });
    const kube = (p: string) => async () => {
      await kubeRequest(kc, p, { timeoutMs: 10_000 });
      return new Response('{}', { status: 200 });
    };
    const page = 'sortBy=createTime&limit=10';
    const rows: [string, () => Promise<Response>, (() => Promise<Response>) | undefined][] = [
      [
        'workspaces page, administrator',
        ours(admin, `v1alpha3/workspacetemplates?${page}`),
        kube(`/apis/tenant.${PLATFORM}.io/v1alpha2/workspacetemplates?limit=10`),
      ],
      ['workspaces page, member of 5', ours(member, `v1alpha3/workspacetemplates?${page}`), undefined],
      [
        "a workspace's projects, administrator",
        ours(admin, `v1alpha2/workspaces/${ws(7)}/namespaces?${page}`),
        kube(
          `/api/v1/namespaces?labelSelector=${encodeURIComponent(`${PLATFORM}.io/workspace=${ws(7)}`)}&limit=10`,
        ),
      ],
      [
        "a workspace's projects, member",
        ours(member, `v1alpha2/workspaces/${ws(3)}/namespaces?${page}`),
        undefined,
      ],
    ];
    for (const [label, call, reference] of rows) {
      const a = await measure(call);
      const b = reference ? await measure(reference) : undefined;
      const ref = b ? `   kube-apiserver LIST ${b.p50.toFixed(2)} / ${b.p99.toFixed(2)}` : '';
      console.log(`${label.padEnd(40)} ours ${a.p50.toFixed(2)} / ${a.p99.toFixed(2)}${ref}`);
    }
    if (CREATES > 0) {
      const access = await creationToAccess(server.url, await token(CREATOR), kc);
      console.log(
        `project created → creator allowed (${CREATES} creates): p50 ${percentile(access, 50).toFixed(0)} ms, p99 ${percentile(access, 99).toFixed(0)} ms, max ${Math.max(...access).toFixed(0)} ms`,
      );
    }
    const memory = server.memory();
    const heap = await server.heap();
    console.log(
      `server RSS ${memory.rssMb.toFixed(0)} MB (peak ${memory.peakRssMb.toFixed(0)}), heap used ${heap.heapUsedMb.toFixed(0)} MB; ready in ${server.readySeconds.toFixed(1)} s`,
    );
  } finally {
    await server.stop();
  }
} finally {
  keys.cleanup();
  rmSync(dir, { recursive: true, force: true });
  await cp.stop();
}
