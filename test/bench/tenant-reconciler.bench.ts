// How soon the creator of a new namespace of a workspace may work in it: from the namespace's creation
// to a SubjectAccessReview as the creator ("create deployments" there) answering allowed, through the
// real server's tenant reconciler on a private real control plane (our chart's CRDs, platformName
// platform). Namespaces one after the other, then a burst created at once. Then the leader's successor:
// two servers with the default lease timing, the leader killed with SIGKILL, the time until the other
// leads and has done new work. Prints figures; asserts nothing.
//   source scripts/ensure-node.sh && node test/bench/tenant-reconciler.bench.ts [--namespaces=50] [--burst=50]
import { AuthorizationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { tenantPaths } from '../../src/tenant/tenant-paths.ts';
import { tenantNames } from '../../src/tenant/tenant-store.ts';
import { startControlPlane } from '../cluster/control-plane.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { adminKubeConfig, createUser, installIamCrds, startReadyServer } from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { installChartTenantCrds } from '../support/tenant-fixtures.ts';
import { percentile } from './sequential-latency.ts';

const flag = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const SEQUENTIAL = flag('namespaces', 50);
const BURST = flag('burst', 50);
const P = 'platform';
const names = tenantNames(P);
const paths = tenantPaths(names);
const CREATOR = 'bench-creator';

const figures = (values: number[]) =>
  `p50 ${percentile(values, 50).toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms, max ${Math.max(...values).toFixed(0)} ms (n=${values.length})`;

async function allowed(kc: KubeConfig, namespace: string): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: {
      spec: {
        user: CREATOR,
        resourceAttributes: { verb: 'create', resource: 'deployments', group: 'apps', namespace },
      },
    },
  });
  return review.status?.allowed === true;
}

/** Creates the namespace now and resolves with the ms until the creator is allowed in it. */
async function timeToAllowed(kc: KubeConfig, workspace: string, namespace: string): Promise<number> {
  const started = performance.now();
  await kc.makeApiClient(CoreV1Api).createNamespace({
    body: {
      metadata: {
        name: namespace,
        labels: { [names.workspaceLabel]: workspace },
        annotations: { [names.creatorAnnotation]: CREATOR },
      },
    },
  });
  await waitFor(
    `${CREATOR} allowed in ${namespace}`,
    async () => ((await allowed(kc, namespace)) ? true : undefined),
    { timeoutMs: 60_000, intervalMs: 10 },
  );
  return performance.now() - started;
}

/**
 * Creates `count` namespaces at once; one checker asks for each in turn until all are allowed (one
 * SubjectAccessReview at a time, so the measuring does not load the cluster it measures). Resolves with
 * the ms from each creation to its creator being allowed.
 */
async function burstToAllowed(kc: KubeConfig, workspace: string, count: number): Promise<number[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const created = new Map<string, number>();
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const name = `bench-burst-${i}`;
      created.set(name, performance.now());
      await core.createNamespace({
        body: {
          metadata: {
            name,
            labels: { [names.workspaceLabel]: workspace },
            annotations: { [names.creatorAnnotation]: CREATOR },
          },
        },
      });
    }),
  );
  const times: number[] = [];
  const deadline = performance.now() + 120_000;
  while (created.size > 0 && performance.now() < deadline) {
    for (const [name, started] of created) {
      if (!(await allowed(kc, name))) continue;
      times.push(performance.now() - started);
      created.delete(name);
    }
  }
  if (created.size > 0) throw new Error(`${created.size} namespaces never allowed their creator`);
  return times;
}

const createTemplate = (kc: KubeConfig, name: string) =>
  kubeRequest(kc, paths.templates, {
    method: 'POST',
    body: {
      apiVersion: `${names.tenantGroup}/v1alpha2`,
      kind: 'WorkspaceTemplate',
      metadata: { name },
      spec: { template: { spec: { manager: CREATOR } }, placement: {} },
    },
    timeoutMs: 10_000,
  });

const leads = async (server: ServerProcess) =>
  /^platform_leader_is_leader 1$/m.test(await (await fetch(`${server.url}/metrics`)).text());

const cp = await startControlPlane();
const servers: ServerProcess[] = [];
try {
  const kc = adminKubeConfig(cp.kubeconfigPath);
  await installIamCrds(kc, P);
  await installChartTenantCrds(kc, P);
  await createUser(kc, { name: CREATOR, password: 'Bench-Pa55word!', groups: [] }, P);
  const start = async () => {
    const server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--platformName=${P}`,
    ]);
    servers.push(server);
    return server;
  };
  const first = await start();
  await waitFor('the server to lead', async () => ((await leads(first)) ? true : undefined), {
    timeoutMs: 30_000,
  });
  await createTemplate(kc, 'bench-ws');
  await waitFor('the workspace', async () =>
    (await kubeRequest<{ items: unknown[] }>(kc, paths.workspaces, { timeoutMs: 10_000 })).items.length > 0
      ? true
      : undefined,
  );

  console.log('# namespace created → its creator allowed to create deployments there (SubjectAccessReview)');
  const sequential: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) sequential.push(await timeToAllowed(kc, 'bench-ws', `bench-seq-${i}`));
  console.log(`one at a time:     ${figures(sequential)}`);
  const burst = await burstToAllowed(kc, 'bench-ws', BURST);
  console.log(`${BURST} at once:        ${figures(burst)}`);
  const metrics = await (await fetch(`${first.url}/metrics`)).text();
  const count = (result: string) =>
    Number(
      new RegExp(`^platform_reconcile_total\\{reconciler="tenant",result="${result}"\\} (\\d+)`, 'm').exec(
        metrics,
      )?.[1] ?? 0,
    );
  console.log(`reconciles: ${count('success')} succeeded, ${count('error')} failed and retried`);

  // The successor of a killed leader, with the default lease timing (15 s lease, 2 s retry period).
  const second = await start();
  const killed = performance.now();
  first.child.kill('SIGKILL');
  await first.exited;
  await waitFor('the second server to lead', async () => ((await leads(second)) ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 50,
  });
  const takeover = performance.now() - killed;
  const afterTakeover = await timeToAllowed(kc, 'bench-ws', 'bench-after-kill');
  console.log(
    `leader killed (SIGKILL) → successor leads: ${(takeover / 1000).toFixed(1)} s (lease 15 s); then a new namespace's creator allowed in ${afterTakeover.toFixed(0)} ms`,
  );
} finally {
  for (const server of servers) await server.stop();
  await cp.stop();
}
