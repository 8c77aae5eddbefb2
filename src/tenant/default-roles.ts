import type { TenantNames } from './tenant-store.ts';

/** A PolicyRule of Kubernetes RBAC (also the rule of a WorkspaceRole). */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

/** A default role: its name (a WorkspaceRole's is prefixed with the workspace's), metadata and rules. */
export interface DefaultRole {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  rules: PolicyRule[];
}

/** The original's RoleBase (`iam.<p>.io/v1alpha2`): a role object to copy into each workspace or project. */
export interface RoleBase {
  metadata: { name: string; labels?: Record<string, string> };
  role?: {
    kind?: string;
    metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    rules?: PolicyRule[];
  };
}

/**
 * The default roles of every workspace: from the cluster's RoleBases whose role is a WorkspaceRole, as
 * the original's workspace template controller reads them; without any, the built-in ones, equal to
 * those the original's installer ships as RoleBases.
 */
export function workspaceRoleDefaults(roleBases: Iterable<RoleBase>, names: TenantNames): DefaultRole[] {
  const fromCluster = rolesOfKind(roleBases, 'WorkspaceRole');
  return fromCluster.length > 0 ? fromCluster : builtInWorkspaceRoles(names);
}

/**
 * The default roles of every project (a namespace of a workspace): from the RoleBases labelled
 * `scope.<p>.io/namespace` whose role is a Kubernetes Role, as the original's namespace controller
 * reads them; without any, the built-in `admin`, `operator` and `viewer`.
 */
export function namespaceRoleDefaults(roleBases: Iterable<RoleBase>, names: TenantNames): DefaultRole[] {
  const scoped = [...roleBases].filter((b) => b.metadata.labels?.[names.namespaceScopeLabel] !== undefined);
  const fromCluster = rolesOfKind(scoped, 'Role');
  return fromCluster.length > 0 ? fromCluster : builtInNamespaceRoles(names);
}

function rolesOfKind(roleBases: Iterable<RoleBase>, kind: string): DefaultRole[] {
  const roles: DefaultRole[] = [];
  for (const base of roleBases) {
    const role = base.role;
    const name = role?.metadata?.name;
    // A RoleBase that is not of this kind, or has no name, is not a default of this kind (as in the original).
    if (role?.kind !== kind || !name) continue;
    roles.push({
      name,
      labels: { ...role.metadata?.labels },
      annotations: { ...role.metadata?.annotations },
      rules: role.rules ?? [],
    });
  }
  return roles.sort((a, b) => a.name.localeCompare(b.name));
}

/** The original's API groups under `<p>`: `monitoring.kubesphere.io` becomes `monitoring.<p>.io`. */
function groups(names: TenantNames, ...list: string[]): string[] {
  return list.map((g) => g.replace(/\.kubesphere\.io$/, `.${names.platformName}.io`));
}

function annotations(names: TenantNames, aggregationRoles: string): Record<string, string> {
  return {
    [`${names.iamGroup}/aggregation-roles`]: aggregationRoles,
    [names.creatorAnnotation]: 'system',
  };
}

const ALL = ['*'];
const READ = ['get', 'list', 'watch'];

/** As the original's RoleBases workspace-admin, -regular, -self-provisioner and -viewer (3.4). */
function builtInWorkspaceRoles(names: TenantNames): DefaultRole[] {
  const role = (name: string, aggregation: string, rules: PolicyRule[]): DefaultRole => ({
    name,
    labels: {},
    annotations: annotations(names, aggregation),
    rules,
  });
  const monitoring = groups(
    names,
    'monitoring.kubesphere.io',
    'metering.kubesphere.io',
    'monitoring.coreos.com',
  );
  return [
    role(
      'admin',
      '["role-template-manage-workspace-settings","role-template-view-workspace-settings","role-template-manage-projects","role-template-view-projects","role-template-create-projects","role-template-create-devops","role-template-view-devops","role-template-manage-devops","role-template-manage-app-templates","role-template-view-app-templates","role-template-manage-app-repos","role-template-view-app-repos","role-template-view-members","role-template-manage-members","role-template-manage-roles","role-template-view-roles","role-template-manage-groups","role-template-view-groups"]',
      [{ apiGroups: ALL, resources: ALL, verbs: ALL }],
    ),
    role('regular', '["role-template-view-workspace-settings"]', [
      { apiGroups: ALL, resources: ['workspaces', 'workspacemembers'], verbs: READ },
      { apiGroups: monitoring, resources: ['namespaces'], verbs: ['list'] },
    ]),
    role(
      'self-provisioner',
      '["role-template-create-projects","role-template-create-devops","role-template-view-app-templates","role-template-manage-app-templates","role-template-view-workspace-settings"]',
      [
        {
          apiGroups: ALL,
          resources: ['workspaces', 'workspacemembers', 'quotas', 'abnormalworkloads', 'pods'],
          verbs: READ,
        },
        {
          apiGroups: ALL,
          resources: ['namespaces', 'federatednamespaces', 'devops', 'devopsprojects'],
          verbs: ['create', 'watch'],
        },
        { apiGroups: ALL, resources: ['devops'], verbs: ['get'] },
        { apiGroups: monitoring, resources: ['namespaces', 'workloads'], verbs: ['get', 'list'] },
        { apiGroups: ['openpitrix.io'], resources: ALL, verbs: ALL },
      ],
    ),
    role(
      'viewer',
      '["role-template-view-projects","role-template-view-devops","role-template-view-app-templates","role-template-view-app-repos","role-template-view-members","role-template-view-roles","role-template-view-groups","role-template-view-workspace-settings"]',
      [{ apiGroups: ALL, resources: ALL, verbs: READ }],
    ),
  ];
}

/** As the original's RoleBases project-admin, -operator and -viewer (3.4): real RBAC, in force. */
function builtInNamespaceRoles(names: TenantNames): DefaultRole[] {
  const role = (name: string, aggregation: string[], rules: PolicyRule[]): DefaultRole => ({
    name,
    labels: {},
    // The original's text: pairs of templates separated by ", " (its YAML folds the lines).
    annotations: annotations(names, `[${aggregation.join(', ')}]`),
    rules,
  });
  const pairs = (...list: string[]) => list.map((t) => `"${t}"`).join(',');
  const view = (...modules: string[]) => modules.map((m) => `role-template-view-${m}`);
  const both = (m: string) => pairs(`role-template-view-${m}`, `role-template-manage-${m}`);
  return [
    role(
      'admin',
      [
        both('members'),
        both('roles'),
        both('app-workloads'),
        both('volumes'),
        both('snapshots'),
        both('secrets'),
        both('serviceaccount'),
        both('configmaps'),
        both('alerting-policies'),
        pairs(...view('alerting-messages')),
        both('custom-monitoring'),
        both('pipelines'),
        both('pipelineruns'),
        both('credentials'),
        both('gitrepositories'),
        both('gitops-applications'),
        pairs('role-template-manage-project-settings', 'role-template-manage-devops-settings'),
      ],
      [{ apiGroups: ALL, resources: ALL, verbs: ALL }],
    ),
    role(
      'operator',
      [
        pairs(...view('members', 'roles')),
        both('app-workloads'),
        both('volumes'),
        both('snapshots'),
        both('secrets'),
        both('serviceaccount'),
        both('configmaps'),
        both('alerting-policies'),
        pairs(...view('alerting-messages')),
        both('custom-monitoring'),
        both('pipelines'),
        both('pipelineruns'),
        both('credentials'),
        both('gitrepositories'),
        both('gitops-applications'),
      ],
      [
        { apiGroups: ALL, resources: ALL, verbs: READ },
        {
          // As the original lists them, monitoring.coreos.com twice included.
          apiGroups: groups(
            names,
            '',
            'apps',
            'extensions',
            'batch',
            'logging.kubesphere.io',
            'monitoring.kubesphere.io',
            'monitoring.coreos.com',
            'metering.kubesphere.io',
            'notification.kubesphere.io',
            'autoscaling',
            'alerting.kubesphere.io',
            'openpitrix.io',
            'app.k8s.io',
            'servicemesh.kubesphere.io',
            'operations.kubesphere.io',
            'devops.kubesphere.io',
            'gitops.kubesphere.io',
            'resources.kubesphere.io',
            'config.istio.io',
            'events.k8s.io',
            'events.kubesphere.io',
            'snapshot.storage.k8s.io',
            'monitoring.coreos.com',
            'networking.k8s.io',
          ),
          resources: ALL,
          verbs: ALL,
        },
      ],
    ),
    role(
      'viewer',
      [
        pairs(...view('members', 'roles')),
        pairs(...view('app-workloads', 'custom-monitoring')),
        pairs(...view('volumes', 'snapshots')),
        pairs(...view('secrets', 'configmaps', 'serviceaccount')),
        pairs(...view('alerting-policies', 'alerting-messages')),
        pairs(...view('pipelines', 'pipelineruns', 'credentials')),
        pairs(...view('gitrepositories')),
        pairs(...view('gitops-applications')),
      ],
      [{ apiGroups: ALL, resources: ALL, verbs: READ }],
    ),
  ];
}
