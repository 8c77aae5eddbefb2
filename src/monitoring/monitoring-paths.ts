/**
 * The original's monitoring routes (`monitoring.<p>.io/v1alpha3`, release 3.4) that answer named metrics
 * selected by `metrics_filter`, in Express path syntax relative to the group's base.
 */
export const NAMED_METRICS_PATHS = [
  '/cluster',
  '/nodes',
  '/nodes/:node',
  '/workspaces',
  '/workspaces/:workspace',
  '/workspaces/:workspace/namespaces',
  '/namespaces',
  '/namespaces/:namespace',
  '/namespaces/:namespace/workloads',
  '/namespaces/:namespace/workloads/:kind',
  '/pods',
  '/namespaces/:namespace/pods',
  '/namespaces/:namespace/pods/:pod',
  '/namespaces/:namespace/workloads/:kind/:workload/pods',
  '/nodes/:node/pods',
  '/nodes/:node/pods/:pod',
  '/namespaces/:namespace/pods/:pod/containers',
  '/namespaces/:namespace/pods/:pod/containers/:container',
  '/storageclasses/:storageclass/persistentvolumeclaims',
  '/namespaces/:namespace/persistentvolumeclaims',
  '/namespaces/:namespace/persistentvolumeclaims/:pvc',
  '/namespaces/:namespace/ingresses',
  '/namespaces/:namespace/ingresses/:ingress',
  '/components/:component',
] as const;

/** `GET …/workspaces[/{workspace}]?type=statistics`. */
export const WORKSPACE_STATISTICS = [
  'workspace_namespace_count',
  'workspace_devops_project_count',
  'workspace_member_count',
  'workspace_role_count',
] as const;

/** Prometheus target metadata and label sets: `{data: [...]}`; ad hoc queries: one metric. */
export const TARGET_PATHS = {
  metadata: ['/targets/metadata', '/namespaces/:namespace/targets/metadata'],
  labelsets: ['/targets/labelsets', '/namespaces/:namespace/targets/labelsets'],
  query: ['/targets/query', '/namespaces/:namespace/targets/query'],
} as const;

/** `/nodes/:node` → `/nodes/{node}` (OpenAPI). */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z]+)/g, '{$1}');
}
