// How soon a membership change is in force: from an administrator's request to the IAM API (invite a
// user to a workspace as its admin: `POST …/workspaces/{ws}/workspacemembers`; or remove them: `DELETE
// …/workspacemembers/{user}`) to a SubjectAccessReview as that user for `create deployments` in a project
// of the workspace answering allowed (or, after a removal, denied). The real server on a private real
// control plane (our chart's CRDs, platformName platform): the request's own checks (the escalation
// check's dry runs in each project included), the RBAC reconciler's watch and writes, and the
// kube-apiserver's RBAC cache. Three rounds of `--changes` changes each, one change at a time: invite
// everyone, remove everyone, invite everyone again; the median of the rounds' p50 and p99. Prints figures;
// asserts nothing.
//   source scripts/ensure-node.sh && node test/bench/iam-in-force.bench.ts [--changes=200] [--projects=3] [--rounds=3]
import {
  AuthorizationV1Api,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { startControlPlane } from '../cluster/control-plane.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { installChartTenantCrds } from '../support/tenant-fixtures.ts';
import { benchArgs } from './bench-args.ts';
import { inBatches, median, percentile } from './sequential-latency.ts';

const args = benchArgs();
const CHANGES = Number(args.get('changes') ?? 200);
const PROJECTS = Number(args.get('projects') ?? 3);
const ROUNDS = Number(args.get('rounds') ?? 3);
const P = 'platform';
const WS = 'bench-inforce';
const ADMIN = 'bench-inforce-admin';
const PASSWORD = 'Bench-Pa55word!';
const RBAC_GROUP = 'rbac.authorization.k8s.io';

async function allowed(kc: KubeConfig, user: string, namespace: string): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user,
        resourceAttributes: { verb: 'create', resource: 'deployments', group: 'apps', namespace },
      },
    },
  });
  return review.status?.allowed === true;
}

const cp = await startControlPlane();
let server: ServerProcess | undefined;
try {
  const kc = adminKubeConfig(cp.kubeconfigPath);
  await installIamCrds(kc, P);
  await installChartTenantCrds(kc, P);
  const members = Array.from({ length: CHANGES }, (_, i) => `bench-member-${i}`);
  await inBatches([ADMIN, ...members], 8, (name) =>
    createUser(kc, { name, password: PASSWORD, groups: [], email: `${name}@bench.example` }, P),
  );
  await kc.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: `${ADMIN}-cluster-admin` },
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: ADMIN }],
    },
  });
  server = await startReadyServer([`--kubernetes.kubeconfig=${cp.kubeconfigPath}`, `--platformName=${P}`]);
  await kubeRequest(kc, `/apis/tenant.${P}.io/v1alpha2/workspacetemplates`, {
    method: 'POST',
    body: {
      apiVersion: `tenant.${P}.io/v1alpha2`,
      kind: 'WorkspaceTemplate',
      metadata: { name: WS },
      spec: { template: { spec: { manager: ADMIN } }, placement: {} },
    },
    timeoutMs: 10_000,
  });
  const projects = Array.from({ length: PROJECTS }, (_, i) => `bench-inforce-${i}`);
  for (const name of projects)
    await kc
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name, labels: { [`${P}.io/workspace`]: WS } } } });
  const project = projects[0]!;
  // The workspace admin role in force: its manager may deploy in the projects.
  await waitFor(
    'the workspace admin role in force',
    async () => ((await allowed(kc, ADMIN, projects.at(-1)!)) ? true : undefined),
    { timeoutMs: 60_000 },
  );
  const login = await passwordLogin(server.url, ADMIN, PASSWORD, { id: P, secret: P });
  const token = String(login.body['access_token']);
  const api = `${server.url}/kapis/iam.${P}.io/v1alpha2/workspaces/${WS}/workspacemembers`;
  const send = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  };

  /** One change, then the SubjectAccessReview asked until it answers `want`: the ms from the request. */
  const change = async (user: string, invite: boolean): Promise<number> => {
    const started = performance.now();
    if (invite) await send('POST', '', [{ username: user, roleRef: `${WS}-admin` }]);
    else await send('DELETE', `/${user}`);
    await waitFor(
      `${user} ${invite ? 'allowed' : 'denied'}`,
      async () => ((await allowed(kc, user, project)) === invite ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 5 },
    );
    return performance.now() - started;
  };

  console.log(
    `# membership change (workspace admin, ${PROJECTS} projects) → SubjectAccessReview as the member in force; ${CHANGES} changes a round`,
  );
  const rounds: { p50: number; p99: number; max: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const invite = r % 2 === 0;
    const times: number[] = [];
    for (const user of members) times.push(await change(user, invite));
    const figures = { p50: percentile(times, 50), p99: percentile(times, 99), max: Math.max(...times) };
    rounds.push(figures);
    console.log(
      `round ${r + 1} (${invite ? 'invite' : 'remove'}): p50 ${figures.p50.toFixed(0)} ms, p99 ${figures.p99.toFixed(0)} ms, max ${figures.max.toFixed(0)} ms`,
    );
  }
  console.log(
    `median of ${ROUNDS} rounds: p50 ${median(rounds.map((r) => r.p50)).toFixed(0)} ms, p99 ${median(rounds.map((r) => r.p99)).toFixed(0)} ms`,
  );
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const count = (result: string) =>
    Number(
      new RegExp(`^platform_reconcile_total\\{reconciler="rbac",result="${result}"\\} (\\d+)`, 'm').exec(
        metrics,
      )?.[1] ?? 0,
    );
  console.log(`rbac reconciles: ${count('success')} succeeded, ${count('error')} failed and retried`);
} finally {
  await server?.stop();
  await cp.stop();
}
