import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { createNodes } from '../cluster/node-fixtures.ts';
import {
  createUser,
  installCrdFiles,
  installIamCrds,
  SEED_CRD_FILES,
  SEED_ROLE_CRD_FILES,
} from '../support/iam-fixtures.ts';
import { createWorkspace, createWorkspaceNamespace, installTenantCrds } from '../support/tenant-fixtures.ts';

/** The console always speaks to `kubesphere`. */
export const PLATFORM = 'kubesphere';

/** What the 16 steps look for on screen. */
export const SEED = {
  admin: {
    name: 'admin',
    password: 'P@88w0rd-console',
    groups: [] as string[],
    email: 'admin@console.example',
  },
  workspace: 'demo-ws',
  project: 'demo-project',
  deployment: 'web-frontend',
  pods: ['web-frontend-7d9c-abcde', 'web-frontend-7d9c-fghij'],
  nodes: 25,
  /** Node of the detail steps: runs the pods and has an event. */
  node: 'node-0001',
  eventReason: 'ConsoleSeedEvent',
} as const;

/** The platform administrator's global role: the modules its role templates grant (as the original's installer does). */
const PLATFORM_ADMIN_TEMPLATES = ['clusters', 'workspaces', 'users', 'roles', 'platform-settings'];

/**
 * A cluster shaped as the original's console expects to find it, on the bare control plane (no
 * controller-manager, no kubelet): the original's users and role CRDs and our IAM CRDs for `kubesphere`,
 * the seed-shaped tenant CRDs, a platform administrator (GlobalRole `platform-admin` aggregating role
 * templates, bound by a GlobalRoleBinding; cluster-admin in Kubernetes RBAC, which is what this server
 * authorizes with), a workspace with a project, a Deployment with its pods (statuses written as a kubelet
 * would), nodes and a node event.
 */
export async function seedConsoleCluster(kc: KubeConfig): Promise<void> {
  await installCrdFiles(kc, [...SEED_CRD_FILES, ...SEED_ROLE_CRD_FILES], PLATFORM);
  await installIamCrds(kc, PLATFORM, { except: ['users'] });
  await installTenantCrds(kc, PLATFORM);
  await createUser(
    kc,
    { ...SEED.admin, annotations: { 'iam.kubesphere.io/globalrole': 'platform-admin' } },
    PLATFORM,
  );
  const iam = { group: 'iam.kubesphere.io', version: 'v1alpha2' };
  const objects = kc.makeApiClient(CustomObjectsApi);
  const globalRole = (name: string, annotations: Record<string, string>) =>
    objects.createClusterCustomObject({
      ...iam,
      plural: 'globalroles',
      body: {
        apiVersion: 'iam.kubesphere.io/v1alpha2',
        kind: 'GlobalRole',
        metadata: { name, annotations },
        rules: [],
      },
    });
  for (const module of PLATFORM_ADMIN_TEMPLATES)
    await globalRole(`role-template-manage-${module}`, {
      'iam.kubesphere.io/role-template-rules': JSON.stringify({ [module]: 'manage' }),
    });
  await globalRole('platform-admin', {
    'iam.kubesphere.io/aggregation-roles': JSON.stringify(
      PLATFORM_ADMIN_TEMPLATES.map((m) => `role-template-manage-${m}`),
    ),
  });
  await objects.createClusterCustomObject({
    ...iam,
    plural: 'globalrolebindings',
    body: {
      apiVersion: 'iam.kubesphere.io/v1alpha2',
      kind: 'GlobalRoleBinding',
      metadata: { name: `${SEED.admin.name}-platform-admin` },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: SEED.admin.name }],
      roleRef: { apiGroup: 'iam.kubesphere.io', kind: 'GlobalRole', name: 'platform-admin' },
    },
  });
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: 'console-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: SEED.admin.name }],
    },
  });

  const core = kc.makeApiClient(CoreV1Api);
  await createNodes(core, SEED.nodes, { prefix: 'node' });
  await createWorkspace(kc, PLATFORM, SEED.workspace, SEED.admin.name);
  await createWorkspaceNamespace(kc, PLATFORM, SEED.workspace, SEED.project);

  const labels = { app: SEED.deployment };
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace: SEED.project,
    body: {
      metadata: { name: SEED.deployment, labels },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
        },
      },
    },
  });
  for (const name of SEED.pods) {
    const pod: V1Pod = {
      metadata: { name, namespace: SEED.project, labels },
      spec: { nodeName: SEED.node, containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
    };
    await core.createNamespacedPod({ namespace: SEED.project, body: pod });
    const now = new Date();
    await core.replaceNamespacedPodStatus({
      name,
      namespace: SEED.project,
      body: {
        ...pod,
        status: {
          phase: 'Running',
          podIP: '10.244.1.7',
          hostIP: '10.0.0.1',
          startTime: now,
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
          containerStatuses: [
            {
              name: 'nginx',
              image: 'nginx:1.27',
              imageID: 'docker-pullable://nginx@sha256:0000',
              ready: true,
              restartCount: 0,
              started: true,
              state: { running: { startedAt: now } },
            },
          ],
        },
      },
    });
  }
  await core.createNamespacedEvent({
    namespace: 'default',
    body: {
      metadata: { name: `${SEED.node}.console-seed` },
      involvedObject: { kind: 'Node', name: SEED.node, uid: SEED.node },
      reason: SEED.eventReason,
      message: 'Seeded for the console test',
      type: 'Normal',
      count: 1,
      firstTimestamp: new Date(),
      lastTimestamp: new Date(),
      source: { component: 'kubelet', host: SEED.node },
    },
  });
}
