/**
 * How the platform's role model becomes Kubernetes RBAC (pure: names, labels, desired objects). Kubernetes
 * RBAC is what authorizes every request (this server's SubjectAccessReviews and the kube-apiserver behind
 * the proxy), so a GlobalRole or WorkspaceRole and its bindings are in force only through objects made
 * from them:
 *
 * - a GlobalRole `r` → the ClusterRole `<p>:globalrole:r` with its rules; a GlobalRoleBinding `b` → the
 *   ClusterRoleBinding `<p>:globalrolebinding:b` (the same subjects) to it — to `cluster-admin` for the
 *   GlobalRole `platform-admin`, as the original's controller binds it;
 * - a WorkspaceRole `r` → the ClusterRole `<p>:workspacerole:r`; a WorkspaceRoleBinding `b` of workspace W
 *   → the RoleBinding `<p>:workspacerolebinding:b` to it in every namespace labelled `<p>.io/workspace: W`.
 *   A RoleBinding grants only namespaced resources in its namespace: a workspace role's rules on
 *   cluster-scoped resources (workspaces, workspacemembers, …) grant nothing in Kubernetes; seeing and
 *   administering the workspace itself is the tenant and IAM APIs' own rule (a WorkspaceRoleBinding).
 *
 * Every generated object is labelled `<p>.io/managed-by: platform-apiserver` and
 * `iam.<p>.io/generated-from: <source kind>`, and annotated `iam.<p>.io/generated-from-name: <source name>`.
 */

const RBAC = 'rbac.authorization.k8s.io';
export const MANAGED_BY = 'platform-apiserver';
/** The GlobalRole whose bindings are bound to Kubernetes' `cluster-admin`, as the original does. */
export const PLATFORM_ADMIN = 'platform-admin';

export type SourceKind = 'GlobalRole' | 'GlobalRoleBinding' | 'WorkspaceRole' | 'WorkspaceRoleBinding';

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

export interface RbacSubject {
  kind: string;
  name: string;
  apiGroup?: string;
  namespace?: string;
}

export interface RbacObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    [field: string]: unknown;
  };
  rules?: unknown[] | null;
  subjects?: RbacSubject[];
  roleRef?: { apiGroup?: string; kind: string; name: string };
  [field: string]: unknown;
}

export interface RbacNames {
  platform: string;
  iamGroup: string;
  managedByLabel: string;
  sourceKindLabel: string;
  sourceNameAnnotation: string;
  workspaceLabel: string;
  aggregationRoles: string;
}

export function rbacNames(platform: string): RbacNames {
  const iam = `iam.${platform}.io`;
  return {
    platform,
    iamGroup: iam,
    managedByLabel: `${platform}.io/managed-by`,
    sourceKindLabel: `${iam}/generated-from`,
    sourceNameAnnotation: `${iam}/generated-from-name`,
    workspaceLabel: `${platform}.io/workspace`,
    aggregationRoles: `${iam}/aggregation-roles`,
  };
}

/** The name of the object generated from a source (a ClusterRole, ClusterRoleBinding or RoleBinding). */
export function generatedName(names: RbacNames, kind: SourceKind, source: string): string {
  return `${names.platform}:${kind.toLowerCase()}:${source}`;
}

/** The ClusterRole a binding of a GlobalRole or WorkspaceRole named `role` is bound to. */
export function boundClusterRole(
  names: RbacNames,
  kind: 'GlobalRole' | 'WorkspaceRole',
  role: string,
): string {
  if (kind === 'GlobalRole' && role === PLATFORM_ADMIN) return 'cluster-admin';
  return generatedName(names, kind, role);
}

/** The source (kind and name) of a generated object, or undefined when it is none of ours. */
export function sourceOf(
  names: RbacNames,
  object: RbacObject,
): { kind: SourceKind; name: string } | undefined {
  if (object.metadata.labels?.[names.managedByLabel] !== MANAGED_BY) return undefined;
  const kind = object.metadata.labels[names.sourceKindLabel];
  const name = object.metadata.annotations?.[names.sourceNameAnnotation];
  if (!name || !isSourceKind(kind)) return undefined;
  return { kind, name };
}

function isSourceKind(kind: string | undefined): kind is SourceKind {
  return (
    kind === 'GlobalRole' ||
    kind === 'GlobalRoleBinding' ||
    kind === 'WorkspaceRole' ||
    kind === 'WorkspaceRoleBinding'
  );
}

function generatedMetadata(names: RbacNames, kind: SourceKind, source: string, namespace?: string) {
  return {
    name: generatedName(names, kind, source),
    ...(namespace === undefined ? {} : { namespace }),
    labels: { [names.managedByLabel]: MANAGED_BY, [names.sourceKindLabel]: kind },
    annotations: { [names.sourceNameAnnotation]: source },
  };
}

/** The ClusterRole made from a GlobalRole or WorkspaceRole. */
export function clusterRoleFor(
  names: RbacNames,
  kind: 'GlobalRole' | 'WorkspaceRole',
  role: RbacObject,
): RbacObject {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRole',
    metadata: generatedMetadata(names, kind, role.metadata.name),
    rules: rulesOf(role),
  };
}

/** The ClusterRoleBinding made from a GlobalRoleBinding. */
export function clusterRoleBindingFor(names: RbacNames, binding: RbacObject): RbacObject {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: generatedMetadata(names, 'GlobalRoleBinding', binding.metadata.name),
    roleRef: {
      apiGroup: RBAC,
      kind: 'ClusterRole',
      name: boundClusterRole(names, 'GlobalRole', binding.roleRef?.name ?? ''),
    },
    subjects: rbacSubjects(binding.subjects),
  };
}

/** The RoleBinding made from a WorkspaceRoleBinding in one namespace of its workspace. */
export function roleBindingFor(names: RbacNames, binding: RbacObject, namespace: string): RbacObject {
  return {
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: generatedMetadata(names, 'WorkspaceRoleBinding', binding.metadata.name, namespace),
    roleRef: {
      apiGroup: RBAC,
      kind: 'ClusterRole',
      name: boundClusterRole(names, 'WorkspaceRole', binding.roleRef?.name ?? ''),
    },
    subjects: rbacSubjects(binding.subjects),
  };
}

/** The subjects Kubernetes RBAC takes: users and groups in the RBAC group, service accounts in none. */
export function rbacSubjects(subjects: readonly RbacSubject[] | undefined): RbacSubject[] {
  return (subjects ?? []).flatMap((s): RbacSubject[] => {
    if (s.kind === 'User' || s.kind === 'Group') return [{ kind: s.kind, apiGroup: RBAC, name: s.name }];
    if (s.kind === 'ServiceAccount' && s.namespace)
      return [{ kind: s.kind, name: s.name, namespace: s.namespace }];
    return [];
  });
}

/** A role's rules as Kubernetes stores them: only the fields of a PolicyRule, empty lists left out. */
export function rulesOf(role: RbacObject): unknown[] {
  if (!Array.isArray(role.rules)) return [];
  return role.rules.map((rule) => {
    if (typeof rule !== 'object' || rule === null) return rule;
    const kept: Record<string, unknown> = {};
    for (const field of RULE_FIELDS) {
      const value = (rule as Record<string, unknown>)[field];
      if (value !== undefined && !(Array.isArray(value) && value.length === 0)) kept[field] = value;
    }
    return kept;
  });
}

const RULE_FIELDS = ['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'];

/**
 * The object `current` with the generated fields of `desired` (labels and annotations merged, rules or
 * roleRef and subjects replaced), or undefined when it already has them. A binding whose roleRef differs
 * cannot be updated (Kubernetes refuses): `replace` says it must be deleted and made again.
 */
export function repaired(current: RbacObject, desired: RbacObject): RbacObject | 'replace' | undefined {
  if (desired.roleRef && !same(current.roleRef, desired.roleRef)) return 'replace';
  const labels = { ...current.metadata.labels, ...desired.metadata.labels };
  const annotations = { ...current.metadata.annotations, ...desired.metadata.annotations };
  const content = desired.roleRef ? { subjects: desired.subjects ?? [] } : { rules: desired.rules ?? [] };
  const unchanged =
    same(labels, current.metadata.labels ?? {}) &&
    same(annotations, current.metadata.annotations ?? {}) &&
    (desired.roleRef
      ? same(current.subjects ?? [], content.subjects)
      : same(rulesOf(current), content.rules));
  if (unchanged) return undefined;
  return { ...current, metadata: { ...current.metadata, labels, annotations }, ...content };
}

/**
 * The aggregation annotation's template names, or undefined when the role has none (or it is not a JSON
 * list of strings: the writes refuse such a role; one written otherwise is left as it is).
 */
export function aggregatedNames(names: RbacNames, role: RbacObject): string[] | undefined {
  const text = role.metadata.annotations?.[names.aggregationRoles];
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) && parsed.every((n) => typeof n === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The union of the templates' rules, in order, duplicates dropped (the role writes' rule). */
export function unionOfRules(templates: readonly RbacObject[]): unknown[] {
  const rules: unknown[] = [];
  const seen = new Set<string>();
  for (const template of templates)
    for (const rule of rulesOf(template)) {
      const key = JSON.stringify(rule);
      if (seen.has(key)) continue;
      seen.add(key);
      rules.push(rule);
    }
  return rules;
}

/** Deep equality of JSON values (key order ignored). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}
