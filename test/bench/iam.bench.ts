// Issue 33 §3: the IAM API at a platform's scale, through the real server on a private real control
// plane with the original's role model (`platformName: kubesphere`): N users, W workspaces, P projects
// and B role bindings (iam-data-set.ts).
//   1. The member and role list pages of every scope, with the original's console's query strings, as
//      the platform administrator: sequential requests, rounds, medians of the rounds' p50 and p99.
//   2. Project membership changes in force, half invites and half removals: an invite through the API
//      (a RoleBinding) until a SubjectAccessReview as the member says allowed, the removal until denied.
//   3. The memory the IAM caches hold: the server's role and users caches alone in a process of their
//      own (iam-cache-heap.ts: live heap after a full collection, before and after their first lists);
//      beside it, the whole server's live heap (through its inspector) with the IAM objects minus that of
//      a server on the same platform without them, which also counts the tenant reconciler's caches.
// Prints figures; asserts nothing.
//   source scripts/ensure-node.sh && node test/bench/iam.bench.ts [--quick] [--users=2000]
//     [--workspaces=500] [--projects=5000] [--bindings=20000] [--requests=200] [--rounds=3] [--changes=1000]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { startControlPlane } from '../cluster/control-plane.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  generateTestKeys,
  installOriginalRoleModel,
  passwordLogin,
} from '../support/iam-fixtures.ts';
import { installTenantCrds } from '../support/tenant-fixtures.ts';
import { benchArgs } from './bench-args.ts';
import {
  ADMIN,
  layout,
  PASSWORD,
  PLATFORM,
  projectCandidate,
  projectName,
  seedIam,
  seedTenants,
  WORKSPACE_MEMBERS,
  workspaceName,
  type Scale,
} from './iam-data-set.ts';
import { inspectorFlag, liveMemory, type LiveMemory } from './inspector-heap.ts';
import { startRealServer, type RealServer } from './real-server.ts';
import { measureSequential, median, percentile, type Latency } from './sequential-latency.ts';

const args = benchArgs();
const quick = args.has('quick');
const option = (name: string, full: number, small: number) =>
  Number(args.get(name) ?? (quick ? small : full));
const scale: Scale = {
  users: option('users', 2000, 200),
  workspaces: option('workspaces', 500, 50),
  projects: option('projects', 5000, 500),
  bindings: option('bindings', 20_000, 2000),
};
const REQUESTS = option('requests', 200, 100);
const ROUNDS = option('rounds', 3, 3);
const CHANGES = option('changes', 1000, 100);
const spread = layout(scale);
/** How long a change may take to be in force before the benchmark gives up on it. */
const IN_FORCE_DEADLINE_MS = 30_000;

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(0)} s`;
const mb = (value: number) => `${value.toFixed(1)} MB`;

async function startServer(
  kubeconfig: string,
  signingKey: string,
  dir: string,
  name: string,
  reconcilers: boolean,
): Promise<{ server: RealServer; inspectorPort: number }> {
  const inspector = await inspectorFlag();
  const server = await startRealServer({
    args: [
      `--kubernetes.kubeconfig=${kubeconfig}`,
      `--platformName=${PLATFORM}`,
      `--auth.signingKeyFile=${signingKey}`,
      '--auth.addressRequestsPerMinute=0',
      '--log.access.mode=exceptions',
      ...(reconcilers ? [] : ['--leaderElection.enabled=false']),
    ],
    nodeFlags: [inspector.flag],
    dir,
    name,
  });
  return { server, inspectorPort: inspector.port };
}

/** Until the tenant reconciler has handled every seeded workspace and project and its queue is empty. */
async function reconcilerCaughtUp(url: string): Promise<void> {
  await waitFor(
    'the tenant reconciler to catch up',
    async () => {
      const metrics = await (await fetch(`${url}/metrics`)).text();
      const handled = /platform_reconcile_total\{reconciler="tenant",result="success"\} (\d+)/.exec(metrics);
      const depth = /platform_reconcile_queue_depth\{reconciler="tenant"\} (\d+)/.exec(metrics);
      return handled && Number(handled[1]) >= scale.workspaces + scale.projects && depth?.[1] === '0'
        ? true
        : undefined;
    },
    { timeoutMs: 30 * 60_000, intervalMs: 1000 },
  );
}

/** How many objects a LIST path holds (one item asked for, the rest counted by the kube-apiserver). */
async function countOf(kc: KubeConfig, listPath: string): Promise<number> {
  const list = await kubeRequest<{ items: unknown[]; metadata: { remainingItemCount?: number } }>(
    kc,
    `${listPath}?limit=1`,
    { timeoutMs: 60_000 },
  );
  return list.items.length + (list.metadata.remainingItemCount ?? 0);
}

/** The console's list pages (src/stores/role.js, user.js, base.js: qs-encoded, in its order). */
function consolePages(): { label: string; paths: (i: number) => string }[] {
  const creator = `annotation=${encodeURIComponent(`${PLATFORM}.io/creator`)}`;
  const page = 'sortBy=createTime&limit=10';
  // A members page also lists every role of its scope for its "change role" dialog.
  const picker = `limit=-1&sortBy=createTime&page=1&${creator}`;
  const ws = (i: number) => workspaceName(i % scale.workspaces);
  const ns = (i: number) => projectName(i % scale.projects);
  return [
    { label: 'users page', paths: () => `users?${page}` },
    { label: 'platform roles', paths: () => `globalroles?${page}&${creator}` },
    { label: 'platform role detail', paths: () => 'globalroles/platform-admin' },
    { label: 'cluster members', paths: () => `clustermembers?${page}` },
    { label: 'cluster roles', paths: () => `clusterroles?${page}&${creator}` },
    { label: 'cluster roles, members page picker', paths: () => `clusterroles?${picker}` },
    { label: 'workspace members', paths: (i) => `workspaces/${ws(i)}/workspacemembers?${page}` },
    { label: 'workspace roles', paths: (i) => `workspaces/${ws(i)}/workspaceroles?${page}&${creator}` },
    { label: 'workspace roles, picker', paths: (i) => `workspaces/${ws(i)}/workspaceroles?${picker}` },
    { label: 'project members', paths: (i) => `namespaces/${ns(i)}/members?${page}` },
    { label: 'project roles', paths: (i) => `namespaces/${ns(i)}/roles?${page}&${creator}` },
    { label: 'project roles, picker', paths: (i) => `namespaces/${ns(i)}/roles?${picker}` },
    { label: 'R-c users/{me}', paths: () => `users/${ADMIN}` },
    { label: 'R-d users/{me}/globalroles', paths: () => `users/${ADMIN}/globalroles` },
    { label: 'N2 clustermembers/{me}/clusterroles', paths: () => `clustermembers/${ADMIN}/clusterroles` },
  ];
}

/** A SubjectAccessReview as `user`: may they create Deployments in `namespace`? */
async function mayCreateDeployments(kc: KubeConfig, user: string, namespace: string): Promise<boolean> {
  const review = await kubeRequest<{ status?: { allowed?: boolean } }>(
    kc,
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    {
      method: 'POST',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user,
          resourceAttributes: { verb: 'create', group: 'apps', resource: 'deployments', namespace },
        },
      },
      timeoutMs: 10_000,
    },
  );
  return review.status?.allowed === true;
}

/** Asks again at once until the review answers `wanted` (each answer is a round trip), or fails after the deadline. */
async function untilReview(
  kc: KubeConfig,
  user: string,
  namespace: string,
  wanted: boolean,
  started: number,
) {
  while ((await mayCreateDeployments(kc, user, namespace)) !== wanted) {
    if (performance.now() - started > IN_FORCE_DEADLINE_MS)
      throw new Error(
        `${user} in ${namespace}: not ${wanted ? 'allowed' : 'denied'} after ${IN_FORCE_DEADLINE_MS} ms`,
      );
  }
  return performance.now() - started;
}

/**
 * One round of project membership changes, half invites and half removals, each on a member of the
 * project's workspace who is not a member of the project: the invite as `operator` (`POST
 * …/namespaces/{ns}/members`) until the member may create Deployments there, then the removal (`DELETE
 * …/members/{user}`) until they may not. Each round takes other (user, project) pairs.
 */
async function membershipChanges(
  kc: KubeConfig,
  iam: string,
  headers: Record<string, string>,
  round: number,
): Promise<{ invite: number[]; remove: number[] }> {
  const invite: number[] = [];
  const remove: number[] = [];
  const pairs = Math.ceil(CHANGES / 2);
  for (let i = 0; i < pairs; i++) {
    const index = round * pairs + i;
    const p = index % scale.projects;
    const j = spread.membersOf(p) + Math.floor(index / scale.projects);
    if (j >= WORKSPACE_MEMBERS)
      throw new Error('more changes than workspace members who are not project members');
    const user = projectCandidate(p, j, scale);
    const ns = projectName(p);
    let started = performance.now();
    const added = await fetch(`${iam}/namespaces/${ns}/members`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ username: user, roleRef: 'operator' }]),
    });
    if (added.status !== 200)
      throw new Error(`invite ${user} to ${ns}: HTTP ${added.status} ${await added.text()}`);
    await added.arrayBuffer();
    invite.push(await untilReview(kc, user, ns, true, started));
    started = performance.now();
    const removed = await fetch(`${iam}/namespaces/${ns}/members/${user}`, { method: 'DELETE', headers });
    if (removed.status !== 200)
      throw new Error(`remove ${user} from ${ns}: HTTP ${removed.status} ${await removed.text()}`);
    await removed.arrayBuffer();
    remove.push(await untilReview(kc, user, ns, false, started));
  }
  return { invite, remove };
}

/** The IAM caches' heap, measured alone in a process of their own (iam-cache-heap.ts). */
function cacheHeap(kubeconfig: string): { roleCacheMb: number; usersCacheMb: number } {
  const script = fileURLToPath(new URL('iam-cache-heap.ts', import.meta.url));
  const out = execFileSync(process.execPath, ['--expose-gc', script, kubeconfig, PLATFORM], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { roleCacheMb: number; usersCacheMb: number };
}

/** The machine's load (1, 5 and 15 minutes): other work on the two cores moves every figure. */
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(', ');

const describe = (m: LiveMemory) =>
  `heap used ${mb(m.heapUsedMb)}, external ${mb(m.externalMb)}, RSS ${mb(m.rssMb)}`;

const cp = await startControlPlane();
const keys = generateTestKeys();
const dir = mkdtempSync(path.join(os.tmpdir(), 'iam-bench-'));
try {
  const kc = adminKubeConfig(cp.kubeconfigPath);
  await installOriginalRoleModel(kc, PLATFORM);
  await installTenantCrds(kc, PLATFORM);
  console.log(
    `# ${scale.users} users, ${scale.workspaces} workspaces, ${scale.projects} projects, ${scale.bindings} role bindings ` +
      `(global ${spread.global}, cluster ${spread.cluster}, workspace ${spread.workspace}, project ${spread.namespace}); ` +
      `${REQUESTS} sequential requests per round, ${ROUNDS} rounds, medians of p50 / p99 (ms); ${CHANGES} changes per round`,
  );
  console.log(`load average at start: ${loadAverage()}`);
  let since = performance.now();
  await seedTenants(kc, scale);
  console.log(`workspaces and projects seeded in ${seconds(since)}`);

  // Without the IAM objects: the same platform, no users, roles or bindings (the reconcilers off, so
  // none of the default roles either).
  const bare = await startServer(cp.kubeconfigPath, keys.es256, dir, 'without-iam', false);
  let without: LiveMemory;
  try {
    without = await liveMemory(bare.inspectorPort);
  } finally {
    await bare.server.stop();
  }
  console.log(`server without the IAM objects: ${describe(without)}`);

  since = performance.now();
  await seedIam(kc, scale);
  console.log(`users and bindings seeded in ${seconds(since)}`);
  const { server, inspectorPort } = await startServer(cp.kubeconfigPath, keys.es256, dir, 'with-iam', true);
  try {
    since = performance.now();
    await reconcilerCaughtUp(server.url);
    console.log(`reconciler caught up (default roles of every workspace and project) in ${seconds(since)}`);
    const login = await passwordLogin(server.url, ADMIN, PASSWORD, { id: PLATFORM, secret: PLATFORM });
    const headers = { Authorization: `Bearer ${login.body['access_token'] as string}` };
    const iam = `${server.url}/kapis/iam.${PLATFORM}.io/v1alpha2`;
    // The reconciler's roles and bindings are in the role cache (they arrive by watch) before anything is timed.
    const lastProject = projectName(scale.projects - 1);
    const lastWorkspace = workspaceName(scale.workspaces - 1);
    await waitFor(
      'the role cache to hold the default roles and the manager bindings',
      async () => {
        const total = async (p: string) =>
          ((await (await fetch(`${iam}/${p}`, { headers })).json()) as { totalItems?: number }).totalItems ??
          0;
        return (await total(`namespaces/${lastProject}/roles`)) >= 3 &&
          (await total(`workspaces/${lastWorkspace}/workspacemembers`)) >= WORKSPACE_MEMBERS + 1
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    const counts = {
      globalrolebindings: await countOf(kc, `/apis/iam.${PLATFORM}.io/v1alpha2/globalrolebindings`),
      clusterrolebindings: await countOf(kc, `${rbac}/clusterrolebindings`),
      workspacerolebindings: await countOf(kc, `/apis/iam.${PLATFORM}.io/v1alpha2/workspacerolebindings`),
      rolebindings: await countOf(kc, `${rbac}/rolebindings`),
      roles: await countOf(kc, `${rbac}/roles`),
      workspaceroles: await countOf(kc, `/apis/iam.${PLATFORM}.io/v1alpha2/workspaceroles`),
      clusterroles: await countOf(kc, `${rbac}/clusterroles`),
    };
    const bindings =
      counts.globalrolebindings +
      counts.clusterrolebindings +
      counts.workspacerolebindings +
      counts.rolebindings;
    console.log(`in the cluster: ${bindings} role bindings ${JSON.stringify(counts)}`);
    const withIam = await liveMemory(inspectorPort);
    console.log(`server with the IAM objects, at rest: ${describe(withIam)}`);
    console.log(
      `the server holds more with them: heap ${mb(withIam.heapUsedMb - without.heapUsedMb)}, external ${mb(withIam.externalMb - without.externalMb)}, RSS ${mb(withIam.rssMb - without.rssMb)}`,
    );
    const caches = cacheHeap(cp.kubeconfigPath);
    console.log(
      `the IAM caches alone (iam-cache-heap.ts): role cache ${mb(caches.roleCacheMb)}, users cache ${mb(caches.usersCacheMb)}: ` +
        `${mb(caches.roleCacheMb + caches.usersCacheMb)} (goal ≤ 60 MB)`,
    );

    console.log('\n## list pages, as the platform administrator (p50 / p99 ms)');
    const pages: Record<string, Latency> = {};
    for (const { label, paths } of consolePages()) {
      let i = 0;
      const call = () => fetch(`${iam}/${paths(i++)}`, { headers });
      const latency = await measureSequential(call, { requests: REQUESTS, rounds: ROUNDS });
      pages[label] = latency;
      console.log(`${label.padEnd(40)} ${latency.p50.toFixed(2)} / ${latency.p99.toFixed(2)}`);
    }
    const worst = Object.entries(pages).reduce((a, b) => (b[1].p99 > a[1].p99 ? b : a));
    console.log(`worst p99: ${worst[0]} ${worst[1].p99.toFixed(2)} ms (goal ≤ 50)`);

    console.log('\n## project membership changes in force (ms)');
    const rounds: { all: Latency; invite: Latency; remove: Latency }[] = [];
    const of = (times: number[]) => ({ p50: percentile(times, 50), p99: percentile(times, 99) });
    const show = (name: string, times: number[]) =>
      `${name} ${percentile(times, 50).toFixed(1)} / ${percentile(times, 99).toFixed(1)} (max ${Math.max(...times).toFixed(1)})`;
    for (let r = 0; r < ROUNDS; r++) {
      since = performance.now();
      const { invite, remove } = await membershipChanges(kc, iam, headers, r);
      rounds.push({ all: of([...invite, ...remove]), invite: of(invite), remove: of(remove) });
      console.log(
        `round ${r + 1} (${seconds(since)}): ${show('all', [...invite, ...remove])}; ${show('invite → allowed', invite)}; ${show('removal → denied', remove)}`,
      );
    }
    const med = (pick: (r: (typeof rounds)[number]) => Latency) =>
      `${median(rounds.map((r) => pick(r).p50)).toFixed(1)} / ${median(rounds.map((r) => pick(r).p99)).toFixed(1)}`;
    console.log(
      `median of rounds, p50 / p99: all ${med((r) => r.all)} (goal p99 ≤ 2000); invite → allowed ${med((r) => r.invite)}; removal → denied ${med((r) => r.remove)}`,
    );
    const after = await liveMemory(inspectorPort);
    console.log(`load average at the end: ${loadAverage()}`);
    console.log(`\nserver after the runs: ${describe(after)}; peak RSS ${mb(server.memory().peakRssMb)}`);
    console.log(
      JSON.stringify({
        scale,
        bindings,
        worst_page_p99_ms: worst[1].p99,
        change_p99_ms: median(rounds.map((r) => r.all.p99)),
        iam_caches_mb: caches.roleCacheMb + caches.usersCacheMb,
        server_heap_added_mb: withIam.heapUsedMb - without.heapUsedMb,
        server_rss_added_mb: withIam.rssMb - without.rssMb,
      }),
    );
  } finally {
    await server.stop();
  }
} finally {
  keys.cleanup();
  rmSync(dir, { recursive: true, force: true });
  await cp.stop();
}
