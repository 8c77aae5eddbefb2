// What the original's console asks around every page (the user, its global role templates, its cluster
// role templates, the users page), through the real server on a private real control plane with N users:
// once on the original's role model (seed-shaped role CRDs, every user bound to a GlobalRole,
// platformName kubesphere) and once with only our CRDs (templates derived from Kubernetes RBAC).
// Beside each, the kube-apiserver answering the nearest equivalent (GET of the User, a LIST page of users).
// Prints figures; asserts nothing.
//   source scripts/ensure-node.sh && node test/bench/iam.bench.ts [--users=2000] [--requests=200] [--rounds=3]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { hashPassword } from '../../src/users/passwords.ts';
import { startControlPlane } from '../cluster/control-plane.ts';
import {
  adminKubeConfig,
  generateTestKeys,
  installIamCrds,
  installOriginalRoleModel,
  passwordLogin,
} from '../support/iam-fixtures.ts';
import { startRealServer } from './real-server.ts';
import { inBatches, measureSequential } from './sequential-latency.ts';

const flag = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const USERS = flag('users', 2000);
const REQUESTS = flag('requests', 200);
const ROUNDS = flag('rounds', 3);
const PASSWORD = 'bench-Pa55word!';
const ME = 'bench-me';

const measure = (call: () => Promise<Response>) =>
  measureSequential(call, { requests: REQUESTS, rounds: ROUNDS });

async function seed(kc: KubeConfig, platform: string, original: boolean): Promise<void> {
  const objects = kc.makeApiClient(CustomObjectsApi);
  const iam = { group: `iam.${platform}.io`, version: 'v1alpha2' };
  const hash = await hashPassword(PASSWORD);
  const names = [ME, ...Array.from({ length: USERS - 1 }, (_, i) => `bench-user-${i}`)];
  await inBatches(names, 25, (name) =>
    objects.createClusterCustomObject({
      ...iam,
      plural: 'users',
      body: {
        apiVersion: `${iam.group}/${iam.version}`,
        kind: 'User',
        metadata: { name },
        spec: { email: `${name}@bench.example`, password: hash, groups: [] },
      },
    }),
  );
  // The caller may read and list users, and do anything: platform-admin in both models.
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const aggregation = original
    ? {
        [`${iam.group}/aggregation-roles`]: JSON.stringify([
          'role-template-view-nodes',
          'role-template-view-pods',
        ]),
      }
    : undefined;
  await rbac.createClusterRole({
    body: {
      metadata: { name: `bench-admin-${platform}`, ...(aggregation ? { annotations: aggregation } : {}) },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: `bench-admin-${platform}` },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: `bench-admin-${platform}`,
      },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: ME }],
    },
  });
  if (!original) return;
  for (const module of ['nodes', 'pods']) {
    await rbac.createClusterRole({
      body: {
        metadata: {
          name: `role-template-view-${module}`,
          annotations: { [`${iam.group}/role-template-rules`]: JSON.stringify({ [module]: 'view' }) },
        },
        rules: [],
      },
    });
  }
  const globalRole = (name: string, annotations: Record<string, string>) =>
    objects.createClusterCustomObject({
      ...iam,
      plural: 'globalroles',
      body: {
        apiVersion: `${iam.group}/v1alpha2`,
        kind: 'GlobalRole',
        metadata: { name, annotations },
        rules: [],
      },
    });
  const modules = ['clusters', 'users', 'workspaces', 'roles'];
  const templates = modules.map((m) => `role-template-view-${m}`);
  for (const module of modules) {
    await globalRole(`role-template-view-${module}`, {
      [`${iam.group}/role-template-rules`]: JSON.stringify({ [module]: 'view' }),
    });
  }
  await globalRole('platform-admin', { [`${iam.group}/aggregation-roles`]: JSON.stringify(templates) });
  await globalRole('platform-regular', {});
  // Every user bound, as the original's console binds each user it creates.
  await inBatches(names, 25, (name) =>
    objects.createClusterCustomObject({
      ...iam,
      plural: 'globalrolebindings',
      body: {
        apiVersion: `${iam.group}/v1alpha2`,
        kind: 'GlobalRoleBinding',
        metadata: { name: `${name}-binding` },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name }],
        roleRef: {
          apiGroup: iam.group,
          kind: 'GlobalRole',
          name: name === ME ? 'platform-admin' : 'platform-regular',
        },
      },
    }),
  );
}

const cp = await startControlPlane();
const keys = generateTestKeys();
const dir = mkdtempSync(path.join(os.tmpdir(), 'iam-bench-'));
try {
  const kc = adminKubeConfig(cp.kubeconfigPath);
  console.log(
    `# ${USERS} users; ${REQUESTS} sequential requests per round, ${ROUNDS} rounds, medians of p50/p99 (ms)`,
  );
  for (const [platform, original] of [
    ['kubesphere', true],
    ['platform', false],
  ] as const) {
    if (original) {
      await installOriginalRoleModel(kc, platform);
    } else {
      await installIamCrds(kc, platform);
    }
    const seedStart = performance.now();
    await seed(kc, platform, original);
    console.log(
      `\n## ${original ? "the original's role model" : 'derived from Kubernetes RBAC'} (platformName ${platform}); seeded in ${((performance.now() - seedStart) / 1000).toFixed(0)} s`,
    );
    const server = await startRealServer({
      args: [
        `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
        `--platformName=${platform}`,
        `--auth.signingKeyFile=${keys.es256}`,
        '--auth.addressRequestsPerMinute=0',
        '--log.access.mode=exceptions',
      ],
      dir,
      name: platform,
    });
    try {
      const login = await passwordLogin(server.url, ME, PASSWORD, { id: platform, secret: platform });
      const headers = { Authorization: `Bearer ${login.body['access_token'] as string}` };
      const ours = (p: string) => () =>
        fetch(`${server.url}/kapis/iam.${platform}.io/v1alpha2/${p}`, { headers });
      // The kube-apiserver with the server's own kind of client (parsed JSON), timed the same way.
      const kube = (p: string) => async () => {
        await kubeRequest(kc, `/apis/iam.${platform}.io/v1alpha2/${p}`, { timeoutMs: 10_000 });
        return new Response('{}', { status: 200 });
      };
      const rows: [string, () => Promise<Response>, (() => Promise<Response>) | undefined][] = [
        ['R-c users/{me}', ours(`users/${ME}`), kube(`users/${ME}`)],
        ['R-d users/{me}/globalroles', ours(`users/${ME}/globalroles`), undefined],
        ['N2 clustermembers/{me}/clusterroles', ours(`clustermembers/${ME}/clusterroles`), undefined],
        [
          'users?limit=10&sortBy=createTime',
          ours('users?limit=10&sortBy=createTime'),
          kube('users?limit=10'),
        ],
      ];
      for (const [label, call, reference] of rows) {
        const a = await measure(call);
        const b = reference ? await measure(reference) : undefined;
        const ref = b
          ? `   kube-apiserver ${b.p50.toFixed(2)} / ${b.p99.toFixed(2)}   ratio p50 ${(a.p50 / b.p50).toFixed(2)}`
          : '';
        console.log(`${label.padEnd(38)} ours ${a.p50.toFixed(2)} / ${a.p99.toFixed(2)}${ref}`);
      }
      const memory = server.memory();
      const heap = await server.heap();
      console.log(
        `server RSS ${memory.rssMb.toFixed(0)} MB (peak ${memory.peakRssMb.toFixed(0)}), heap used ${heap.heapUsedMb.toFixed(0)} MB; ready in ${server.readySeconds.toFixed(1)} s`,
      );
    } finally {
      await server.stop();
    }
  }
} finally {
  keys.cleanup();
  rmSync(dir, { recursive: true, force: true });
  await cp.stop();
}
