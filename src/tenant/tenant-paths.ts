import type { TenantNames } from './tenant-store.ts';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/** Collection paths of what the tenant reconciler reads and writes, for one platform name. */
export function tenantPaths(names: TenantNames) {
  const tenant = `/apis/${names.tenantGroup}`;
  const iam = `/apis/${names.iamGroup}/v1alpha2`;
  const ns = (namespace: string) => `${RBAC}/namespaces/${encodeURIComponent(namespace)}`;
  return {
    templates: `${tenant}/v1alpha2/workspacetemplates`,
    workspaces: `${tenant}/v1alpha1/workspaces`,
    workspaceRoles: `${iam}/workspaceroles`,
    workspaceRoleBindings: `${iam}/workspacerolebindings`,
    roleBases: `${iam}/rolebases`,
    users: `${iam}/users`,
    namespaces: '/api/v1/namespaces',
    /** Roles of every namespace (list and watch only). */
    allRoles: `${RBAC}/roles`,
    roles: (namespace: string) => `${ns(namespace)}/roles`,
    roleBindings: (namespace: string) => `${ns(namespace)}/rolebindings`,
  };
}

export type TenantPaths = ReturnType<typeof tenantPaths>;

/** `collection/name` */
export function objectPath(collection: string, name: string): string {
  return `${collection}/${encodeURIComponent(name)}`;
}
