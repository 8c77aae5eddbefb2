/**
 * The role model of the system we re-create, as stored in the cluster: its GlobalRoles,
 * WorkspaceRoles (group `iam.<platform>.io`) and Kubernetes' own ClusterRoles and Roles, each with its
 * bindings. Only what this server reads of them is typed; objects are served as the apiserver sent them.
 */
export interface RoleObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string;
    resourceVersion?: string;
    managedFields?: unknown;
  };
  rules?: unknown[];
}

export interface Subject {
  kind: string;
  name: string;
  apiGroup?: string;
  namespace?: string;
}

export interface BindingObject {
  metadata: RoleObject['metadata'];
  subjects?: Subject[];
  roleRef: { apiGroup?: string; kind: string; name: string };
}

/** The annotation and label names of the original's role model, in the platform's IAM group. */
export interface RoleVocabulary {
  /** JSON array of the names of the role templates a role aggregates. */
  aggregationRoles: string;
  /** JSON object `{module: action | [actions]}`: what the console shows a role template grants. */
  templateRules: string;
  /** Label marking a role template. */
  templateLabel: string;
  /** Label tying a WorkspaceRoleBinding to its workspace (`<platform>.io/workspace`). */
  workspaceLabel: string;
  /** The annotation on a User naming its global role. */
  globalRole: string;
  /** The annotations on a member (a User) naming its role at the cluster, in a workspace, in a namespace. */
  clusterRole: string;
  workspaceRole: string;
  namespaceRole: string;
  /** `<platform>.io/alias-name`: the display name the list query's `alias` matches. */
  alias: string;
  /** Marks a role template this server derived from Kubernetes RBAC (no such object is stored). */
  derivedFrom: string;
}

export function roleVocabulary(platformName: string): RoleVocabulary {
  const iam = `iam.${platformName}.io`;
  return {
    aggregationRoles: `${iam}/aggregation-roles`,
    templateRules: `${iam}/role-template-rules`,
    templateLabel: `${iam}/role-template`,
    workspaceLabel: `${platformName}.io/workspace`,
    globalRole: `${iam}/globalrole`,
    clusterRole: `${iam}/clusterrole`,
    workspaceRole: `${iam}/workspacerole`,
    namespaceRole: `${iam}/role`,
    alias: `${platformName}.io/alias-name`,
    derivedFrom: `${iam}/derived-from`,
  };
}
