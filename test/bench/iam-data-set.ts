// The IAM benchmark's platform: users, workspaces, projects and role bindings shaped as the original's
// console and controllers leave them (bindings named `{user}-{role}`, labelled `iam.<p>.io/user-ref`),
// seeded into a real kube-apiserver over its REST API with bounded concurrency. The tenant reconciler
// of the server under test gives each workspace and project its default roles; the binding counts
// below count the workspace manager's binding it makes too.
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import { hashPassword } from '../../src/users/passwords.ts';
import { inBatches } from './sequential-latency.ts';

export const PLATFORM = 'kubesphere';
export const PASSWORD = 'bench-Pa55word!';
export const ADMIN = 'bench-admin';
/** Seeded members per workspace (besides its manager): the pool its projects' members come from. */
export const WORKSPACE_MEMBERS = 7;
const PROJECT_ROLES = ['admin', 'operator', 'viewer'] as const;
/** Writes in flight while seeding: enough to keep the kube-apiserver busy, not to flood it. */
const CONCURRENCY = 50;

const IAM = `/apis/iam.${PLATFORM}.io/v1alpha2`;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const TENANT = `/apis/tenant.${PLATFORM}.io/v1alpha2`;
const USER_REF = `iam.${PLATFORM}.io/user-ref`;
const WORKSPACE_LABEL = `${PLATFORM}.io/workspace`;
const CREATOR = `${PLATFORM}.io/creator`;

export interface Scale {
  users: number;
  workspaces: number;
  projects: number;
  /** Role bindings of every kind: GlobalRole-, ClusterRole-, WorkspaceRole- and RoleBindings. */
  bindings: number;
}

/** How the bindings are spread: every user has a platform role, a tenth are cluster members, the rest is projects'. */
export interface Layout {
  global: number;
  cluster: number;
  /** Seeded WorkspaceRoleBindings plus one manager binding per workspace (the reconciler's). */
  workspace: number;
  namespace: number;
  /** Members of project `p` (at most WORKSPACE_MEMBERS). */
  membersOf(p: number): number;
}

export function layout(scale: Scale): Layout {
  const global = scale.users;
  const cluster = Math.floor(scale.users / 10);
  const workspace = scale.workspaces * (WORKSPACE_MEMBERS + 1);
  const namespace = Math.max(0, scale.bindings - global - cluster - workspace);
  const base = Math.floor(namespace / scale.projects);
  const extra = namespace % scale.projects;
  if (base + (extra > 0 ? 1 : 0) > WORKSPACE_MEMBERS)
    throw new Error(`${namespace} project bindings exceed ${WORKSPACE_MEMBERS} members per project`);
  return { global, cluster, workspace, namespace, membersOf: (p) => base + (p < extra ? 1 : 0) };
}

const pad = (i: number, width: number) => String(i).padStart(width, '0');
export const workspaceName = (w: number) => `bench-ws-${pad(w, 4)}`;
export const projectName = (p: number) => `bench-p-${pad(p, 5)}`;
export const userName = (u: number) => `bench-u-${pad(u, 5)}`;
/** A project's workspace: projects are dealt to workspaces in turn. */
export const workspaceOf = (p: number, scale: Scale) => p % scale.workspaces;

/** The k-th seeded member of workspace w (user names repeat across workspaces once all are used). */
export function workspaceMember(w: number, k: number, scale: Scale): string {
  return userName((w * WORKSPACE_MEMBERS + k) % (scale.users - 1));
}

/**
 * The j-th workspace member as seen from project p: its members are j < membersOf(p); the others are
 * members of its workspace who are not members of the project (whom the benchmark invites).
 */
export function projectCandidate(p: number, j: number, scale: Scale): string {
  const w = workspaceOf(p, scale);
  return workspaceMember(w, (Math.floor(p / scale.workspaces) + j) % WORKSPACE_MEMBERS, scale);
}

const post = (kc: KubeConfig, path: string, body: object) =>
  kubeRequest(kc, path, { method: 'POST', body, timeoutMs: 60_000 });

const binding = (name: string, labels: Record<string, string>, user: string) => ({
  metadata: { name, labels: { [USER_REF]: user, ...labels } },
  subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
});

/** The workspaces and projects: what the platform holds before anyone is a member of anything. */
export async function seedTenants(kc: KubeConfig, scale: Scale): Promise<void> {
  const workspaces = Array.from({ length: scale.workspaces }, (_, w) => w);
  await inBatches(workspaces, CONCURRENCY, (w) =>
    post(kc, `${TENANT}/workspacetemplates`, {
      apiVersion: `tenant.${PLATFORM}.io/v1alpha2`,
      kind: 'WorkspaceTemplate',
      metadata: { name: workspaceName(w), annotations: { [CREATOR]: ADMIN } },
      spec: { template: { spec: { manager: ADMIN } } },
    }),
  );
  const projects = Array.from({ length: scale.projects }, (_, p) => p);
  await inBatches(projects, CONCURRENCY, (p) =>
    post(kc, '/api/v1/namespaces', {
      metadata: { name: projectName(p), labels: { [WORKSPACE_LABEL]: workspaceName(workspaceOf(p, scale)) } },
    }),
  );
}

/** Users, the platform's and the cluster's roles, and every member binding of the layout. */
export async function seedIam(kc: KubeConfig, scale: Scale): Promise<void> {
  const spread = layout(scale);
  const hash = await hashPassword(PASSWORD);
  const users = [ADMIN, ...Array.from({ length: scale.users - 1 }, (_, u) => userName(u))];
  await inBatches(users, CONCURRENCY, (name) =>
    post(kc, `${IAM}/users`, {
      apiVersion: `iam.${PLATFORM}.io/v1alpha2`,
      kind: 'User',
      metadata: { name },
      spec: { email: `${name}@bench.example`, password: hash, groups: [] },
    }),
  );
  await seedRoles(kc);
  // The administrator: Kubernetes' cluster-admin, and the platform's administrator role.
  await post(kc, `${RBAC}/clusterrolebindings`, {
    ...binding(`${ADMIN}-cluster-admin`, {}, ADMIN),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
  });
  await inBatches(users, CONCURRENCY, (name) => {
    const role = name === ADMIN ? 'platform-admin' : 'platform-regular';
    return post(kc, `${IAM}/globalrolebindings`, {
      apiVersion: `iam.${PLATFORM}.io/v1alpha2`,
      kind: 'GlobalRoleBinding',
      ...binding(`${name}-${role}`, {}, name),
      roleRef: { apiGroup: `iam.${PLATFORM}.io`, kind: 'GlobalRole', name: role },
    });
  });
  const clusterMembers = Array.from({ length: spread.cluster }, (_, i) => userName(i * 10));
  await inBatches(clusterMembers, CONCURRENCY, (name) =>
    post(kc, `${RBAC}/clusterrolebindings`, {
      ...binding(`${name}-cluster-viewer`, {}, name),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-viewer' },
    }),
  );
  // Workspace members as `{ws}-regular`: it grants nothing in the workspace's projects, so project
  // access is the project's bindings alone (what the membership changes measure).
  const workspaceBindings = Array.from({ length: scale.workspaces * WORKSPACE_MEMBERS }, (_, i) => i);
  await inBatches(workspaceBindings, CONCURRENCY, (i) => {
    const w = Math.floor(i / WORKSPACE_MEMBERS);
    const user = workspaceMember(w, i % WORKSPACE_MEMBERS, scale);
    const role = `${workspaceName(w)}-regular`;
    return post(kc, `${IAM}/workspacerolebindings`, {
      apiVersion: `iam.${PLATFORM}.io/v1alpha2`,
      kind: 'WorkspaceRoleBinding',
      ...binding(`${user}-${role}`, { [WORKSPACE_LABEL]: workspaceName(w) }, user),
      roleRef: { apiGroup: `iam.${PLATFORM}.io`, kind: 'WorkspaceRole', name: role },
    });
  });
  const projectBindings = Array.from({ length: scale.projects }, (_, p) =>
    Array.from({ length: spread.membersOf(p) }, (_, j) => ({ p, j })),
  ).flat();
  await inBatches(projectBindings, CONCURRENCY, ({ p, j }) => {
    const user = projectCandidate(p, j, scale);
    const role = PROJECT_ROLES[j % PROJECT_ROLES.length]!;
    return post(kc, `${RBAC}/namespaces/${projectName(p)}/rolebindings`, {
      ...binding(`${user}-${role}`, {}, user),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
    });
  });
}

/** The platform roles (GlobalRoles and their templates) and the cluster roles the console lists. */
async function seedRoles(kc: KubeConfig): Promise<void> {
  const listed = { [CREATOR]: 'admin' };
  const templateOf = (module: string) => ({
    [`iam.${PLATFORM}.io/role-template-rules`]: JSON.stringify({ [module]: 'view' }),
  });
  const globalModules = ['clusters', 'users', 'workspaces', 'roles'];
  const globalRole = (name: string, annotations: Record<string, string>) =>
    post(kc, `${IAM}/globalroles`, {
      apiVersion: `iam.${PLATFORM}.io/v1alpha2`,
      kind: 'GlobalRole',
      metadata: { name, annotations },
      rules: [],
    });
  for (const module of globalModules) await globalRole(`role-template-view-${module}`, templateOf(module));
  const aggregate = (templates: string[]) => ({
    [`iam.${PLATFORM}.io/aggregation-roles`]: JSON.stringify(templates),
  });
  await globalRole('platform-admin', {
    ...listed,
    ...aggregate(globalModules.map((m) => `role-template-view-${m}`)),
  });
  await globalRole('platform-regular', listed);
  for (const module of ['nodes', 'pods']) {
    await post(kc, `${RBAC}/clusterroles`, {
      metadata: { name: `role-template-view-${module}`, annotations: templateOf(module) },
      rules: [],
    });
  }
  await post(kc, `${RBAC}/clusterroles`, {
    metadata: {
      name: 'cluster-viewer',
      annotations: { ...listed, ...aggregate(['role-template-view-nodes', 'role-template-view-pods']) },
    },
    rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch'] }],
  });
}
