import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  StorageV1Api,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { createNodes } from '../cluster/node-fixtures.ts';
import { createUser, installOriginalRoleModel } from '../support/iam-fixtures.ts';
import { createWorkspace, createWorkspaceNamespace, installTenantCrds } from '../support/tenant-fixtures.ts';

/** The console always speaks to `kubesphere`. */
export const PLATFORM = 'kubesphere';

/** What the steps look for on screen. */
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
  /** A StorageClass with one PVC of it (its `kubesphere.io/pvc-count` is computed by our server), and a PV. */
  storageClass: 'console-standard',
  pvc: 'console-data',
  pv: 'console-pv-0001',
  /** Roles with the creator annotation the console's role lists ask for (as the original's installer and controllers leave them). */
  platformRoles: ['platform-admin', 'platform-regular'],
  clusterRole: 'cluster-viewer',
  workspaceRoles: ['demo-ws-admin', 'demo-ws-viewer'],
  projectRoles: ['admin', 'operator', 'viewer'],
  /** What the console's create and delete steps make and remove. */
  newWorkspace: 'console-ws',
  newProject: 'console-project',
  /**
   * The user the administration steps create, invite, log in as and delete: first with the platform role
   * `users-manager`, then `platform-regular`; a member of `team-ws` (not of `demo-ws`) and of one of its two
   * projects.
   */
  userFlow: {
    name: 'console-user',
    password: 'Console-user-1',
    email: 'console-user@console.example',
    newEmail: 'console-user@team.example',
    firstRole: 'users-manager',
    role: 'platform-regular',
    workspace: 'team-ws',
    project: 'team-project',
    otherProject: 'team-other',
    deployment: 'user-deployment',
  },
} as const;

/**
 * The platform administrator's global role: the role templates it aggregates, as the original's installer
 * ships them (the module each belongs to and its alias are what a role's Permissions card shows).
 */
const PLATFORM_ADMIN_TEMPLATES = [
  { module: 'clusters', group: 'Clusters Management', alias: 'Clusters Management' },
  { module: 'workspaces', group: 'Access Control', alias: 'Workspaces Management' },
  { module: 'users', group: 'Access Control', alias: 'Users Management' },
  { module: 'roles', group: 'Access Control', alias: 'Roles Management' },
  { module: 'platform-settings', group: 'Platform Settings', alias: 'Platform Settings Management' },
];
const CREATOR = 'kubesphere.io/creator';

/**
 * A cluster shaped as the original's console expects to find it, on the bare control plane (no
 * controller-manager, no kubelet): the original's users and role CRDs and our IAM CRDs for `kubesphere`,
 * the seed-shaped tenant CRDs, a platform administrator (GlobalRole `platform-admin` aggregating role
 * templates, bound by a GlobalRoleBinding; cluster-admin in Kubernetes RBAC, which is what this server
 * authorizes with), a workspace with a project, a Deployment with its pods (statuses written as a kubelet
 * would), nodes and a node event.
 */
export async function seedConsoleCluster(kc: KubeConfig): Promise<void> {
  await installOriginalRoleModel(kc, PLATFORM);
  await installTenantCrds(kc, PLATFORM);
  await createUser(
    kc,
    { ...SEED.admin, annotations: { 'iam.kubesphere.io/globalrole': 'platform-admin' } },
    PLATFORM,
  );
  const iam = { group: 'iam.kubesphere.io', version: 'v1alpha2' };
  const objects = kc.makeApiClient(CustomObjectsApi);
  const globalRole = (
    name: string,
    annotations: Record<string, string>,
    labels: Record<string, string> = {},
  ) =>
    objects.createClusterCustomObject({
      ...iam,
      plural: 'globalroles',
      body: {
        apiVersion: 'iam.kubesphere.io/v1alpha2',
        kind: 'GlobalRole',
        metadata: { name, annotations, labels },
        rules: [],
      },
    });
  for (const t of PLATFORM_ADMIN_TEMPLATES)
    await globalRole(
      `role-template-manage-${t.module}`,
      {
        'iam.kubesphere.io/role-template-rules': JSON.stringify({ [t.module]: 'manage' }),
        'iam.kubesphere.io/module': t.group,
        'kubesphere.io/alias-name': t.alias,
      },
      { 'iam.kubesphere.io/role-template': 'true' },
    );
  await globalRole('platform-admin', {
    [CREATOR]: 'system',
    'iam.kubesphere.io/aggregation-roles': JSON.stringify(
      PLATFORM_ADMIN_TEMPLATES.map((t) => `role-template-manage-${t.module}`),
    ),
  });
  await globalRole('platform-regular', { [CREATOR]: 'system' });
  await globalRole(SEED.userFlow.firstRole, {
    [CREATOR]: 'system',
    'iam.kubesphere.io/aggregation-roles': JSON.stringify(['role-template-manage-users']),
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
  await seedScopedRoles(kc);
  await seedStorage(kc);
  await seedTeam(kc);

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

const READ_ALL = [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch'] }];
const ALL = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];

/**
 * The roles and bindings of the cluster, `demo-ws` and `demo-project` as the original's installer and
 * controllers leave them (creator `system`; the administrator bound in the workspace and the project, with
 * the `iam.kubesphere.io/user-ref` label of the original's bindings), so that every Members and Roles page
 * has data. Our tenant reconciler, where it runs, adopts these same names.
 */
async function seedScopedRoles(kc: KubeConfig): Promise<void> {
  const system = { [CREATOR]: 'system' };
  const userRef = { 'iam.kubesphere.io/user-ref': SEED.admin.name };
  const subjects = [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: SEED.admin.name }];
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: { metadata: { name: SEED.clusterRole, annotations: system }, rules: READ_ALL },
  });

  const objects = kc.makeApiClient(CustomObjectsApi);
  const workspaceLabel = { 'kubesphere.io/workspace': SEED.workspace };
  for (const name of SEED.workspaceRoles)
    await objects.createClusterCustomObject({
      group: 'iam.kubesphere.io',
      version: 'v1alpha2',
      plural: 'workspaceroles',
      body: {
        apiVersion: 'iam.kubesphere.io/v1alpha2',
        kind: 'WorkspaceRole',
        metadata: { name, labels: workspaceLabel, annotations: system },
        rules: name.endsWith('-admin') ? ALL : READ_ALL,
      },
    });
  const workspaceAdmin = SEED.workspaceRoles[0];
  await objects.createClusterCustomObject({
    group: 'iam.kubesphere.io',
    version: 'v1alpha2',
    plural: 'workspacerolebindings',
    body: {
      apiVersion: 'iam.kubesphere.io/v1alpha2',
      kind: 'WorkspaceRoleBinding',
      metadata: { name: workspaceAdmin, labels: { ...workspaceLabel, ...userRef } },
      roleRef: { apiGroup: 'iam.kubesphere.io', kind: 'WorkspaceRole', name: workspaceAdmin },
      subjects,
    },
  });

  const namespace = SEED.project;
  for (const name of SEED.projectRoles)
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name, annotations: system },
        rules: name === 'admin' ? ALL : READ_ALL,
      },
    });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: `${SEED.admin.name}-admin`, labels: userRef },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'admin' },
      subjects,
    },
  });
}

/**
 * The workspace of the user steps, with two projects (the user is invited to one). Its default roles are
 * our tenant reconciler's; the role templates their `iam.kubesphere.io/aggregation-roles` name are copied
 * into the project here, as the original's namespace controller copies them from its RoleBases: the
 * console shows a member the actions of their role's templates (a Create button for `deployments`).
 */
async function seedTeam(kc: KubeConfig): Promise<void> {
  const team = SEED.userFlow;
  await createWorkspace(kc, PLATFORM, team.workspace, SEED.admin.name);
  for (const project of [team.project, team.otherProject])
    await createWorkspaceNamespace(kc, PLATFORM, team.workspace, project);
  const workloads = ['deployments', 'statefulsets', 'daemonsets', 'jobs', 'cronjobs', 'pods', 'services'];
  const templates = [
    { name: 'role-template-view-app-workloads', action: 'view', verbs: ['get', 'list', 'watch'] },
    { name: 'role-template-manage-app-workloads', action: 'manage', verbs: ['*'] },
  ];
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  for (const t of templates)
    await rbac.createNamespacedRole({
      namespace: team.project,
      body: {
        metadata: {
          name: t.name,
          labels: { 'iam.kubesphere.io/role-template': 'true' },
          annotations: {
            'iam.kubesphere.io/role-template-rules': JSON.stringify(
              Object.fromEntries(workloads.map((m) => [m, t.action])),
            ),
          },
        },
        rules: [{ apiGroups: ['', 'apps', 'batch'], resources: workloads, verbs: t.verbs }],
      },
    });
}

/** A StorageClass, one PVC of it in the project (its PVC count is 1), and a PV (the Persistent Volumes tab). */
async function seedStorage(kc: KubeConfig): Promise<void> {
  await kc.makeApiClient(StorageV1Api).createStorageClass({
    body: {
      metadata: { name: SEED.storageClass },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
    },
  });
  const core = kc.makeApiClient(CoreV1Api);
  const pv = {
    metadata: { name: SEED.pv },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: SEED.storageClass,
      hostPath: { path: '/tmp/console-pv' },
    },
  };
  await core.createPersistentVolume({ body: pv });
  // Written as the PV controller would (there is none here): free to bind.
  await core.replacePersistentVolumeStatus({
    name: SEED.pv,
    body: { ...pv, status: { phase: 'Available' } },
  });
  await core.createNamespacedPersistentVolumeClaim({
    namespace: SEED.project,
    body: {
      metadata: { name: SEED.pvc },
      spec: {
        storageClassName: SEED.storageClass,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    },
  });
}
