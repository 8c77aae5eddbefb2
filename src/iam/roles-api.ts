import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  listEnvelope,
  schemaRef,
  statusResponse,
  type ApiDescription,
  type Operation,
  type Parameter,
  type PathItem,
} from '../http/openapi-components.ts';
import { metadataListParameters } from '../list-query/list-query-api.ts';
import { iamPrefix } from './iam-paths.ts';
import { roleWriteOperations } from './role-writes-api.ts';

const noStore = { 'Cache-Control': { schema: { const: 'no-store' } } };
const path = (name: string): Parameter => ({ name, in: 'path', required: true, schema: { type: 'string' } });

interface ScopeText {
  /** The roles in a word, e.g. "ClusterRoles". */
  title: string;
  /** Which roles a list holds. */
  what: string;
  /** Who may list them. */
  rbac: string;
  /** Who may read one. */
  rbacOne: string;
  /** The 404s besides an unknown role. */
  unknown?: string;
}

const SCOPES: Record<'global' | 'cluster' | 'workspace' | 'namespace', ScopeText> = {
  global: {
    title: 'GlobalRoles',
    rbacOne: 'RBAC `get` on the GlobalRole',
    what: 'GlobalRoles (`iam.<platform>.io`; none where that resource is not installed)',
    rbac: 'RBAC `list` `globalroles` in `iam.<platform>.io`',
  },
  cluster: {
    title: 'ClusterRoles',
    what: 'Kubernetes ClusterRoles',
    rbac: 'RBAC `list` `clusterroles`',
    rbacOne: 'RBAC `get` on the ClusterRole',
  },
  workspace: {
    title: 'the WorkspaceRoles of a workspace',
    rbacOne:
      'RBAC `get` on the WorkspaceRole in `iam.<platform>.io`, or seeing the workspace (a member of it, or RBAC `get` on its WorkspaceTemplate)',
    what: 'the WorkspaceRoles labelled `<platform>.io/workspace: {workspace}` — all role templates when the query asks for them (`label`/`labelSelector` on `iam.<platform>.io/role-template`, or `aggregateTo`); none where WorkspaceRoles are not installed',
    rbac: 'RBAC `list` `workspaceroles` in `iam.<platform>.io`, or seeing the workspace (a member of it, or RBAC `get` on its WorkspaceTemplate)',
    unknown: 'No such workspace (WorkspaceTemplate).',
  },
  namespace: {
    title: 'the Roles of a namespace',
    rbacOne: 'RBAC `get` on the Role in the namespace',
    what: 'the Kubernetes Roles of the namespace',
    rbac: 'RBAC `list` `roles` in the namespace',
    unknown: 'No such namespace.',
  },
};

const aggregateTo: Parameter = {
  name: 'aggregateTo',
  in: 'query',
  description:
    'Only the roles this role aggregates (its `iam.<platform>.io/aggregation-roles`: its role templates); none when it does not exist.',
  schema: { type: 'string' },
};

function listOperation(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `List ${scope.title}`,
    description: `${scope.what}, from watch-backed caches, in the v1alpha3 list envelope. Who: ${scope.rbac}.`,
    security: BEARER,
    parameters: [...parameters, ...metadataListParameters('roles'), aggregateTo],
    responses: {
      '200': jsonResponse('A page of roles.', schemaRef('IamRoleList'), noStore),
      '400': statusResponse('A query parameter is malformed or repeated; the message names it.'),
      '401': statusResponse('No or invalid bearer token.'),
      '403': statusResponse(`Without ${scope.rbac}.`),
      ...(scope.unknown ? { '404': statusResponse(scope.unknown) } : {}),
      '503': statusResponse('The role caches are starting, or authorization cannot be checked.'),
      default: DEFAULT_STATUS_RESPONSE,
    },
  };
}

function getOperation(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `One of ${scope.title}`,
    description: `As stored (without \`managedFields\`), with \`apiVersion\` and \`kind\`. Who: ${scope.rbacOne}.`,
    security: BEARER,
    parameters,
    responses: {
      '200': jsonResponse('The role.', schemaRef('IamRole'), noStore),
      '401': statusResponse('No or invalid bearer token.'),
      '403': statusResponse(`Without ${scope.rbacOne}.`),
      '404': statusResponse(`No such role.${scope.unknown ? ` ${scope.unknown}` : ''}`),
      '503': statusResponse('The role caches are starting, or authorization cannot be checked.'),
      default: DEFAULT_STATUS_RESPONSE,
    },
  };
}

/** The role lists and one role at the global, cluster, workspace and namespace scope. */
export function rolesApi(ctx: { platformName: string }): ApiDescription {
  const prefix = iamPrefix(ctx.platformName);
  const ws = [path('workspace')];
  const ns = [path('namespace')];
  const writes = roleWriteOperations(ctx.platformName);
  const withWrites = (p: string, item: PathItem): PathItem => ({ ...item, ...writes[p] });
  return {
    schemas: {
      IamRole: {
        type: 'object',
        description:
          'A GlobalRole, Kubernetes ClusterRole, WorkspaceRole or Kubernetes Role as stored; the console reads its `metadata` (annotations `iam.<platform>.io/aggregation-roles`, `…/role-template-rules`, the `kubesphere.io/creator` and alias annotations) and `rules`.',
        required: ['apiVersion', 'kind', 'metadata'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { enum: ['GlobalRole', 'ClusterRole', 'WorkspaceRole', 'Role'] },
          metadata: { type: 'object', required: ['name'] },
          rules: {
            type: ['array', 'null'],
            description:
              '`null` for an aggregated ClusterRole whose rules are not aggregated yet, as stored.',
          },
        },
      },
      IamRoleList: listEnvelope('IamRole'),
    },
    paths: Object.fromEntries(
      Object.entries({
        [`${prefix}/globalroles`]: { get: listOperation('listGlobalRoles', SCOPES.global, []) },
        [`${prefix}/globalroles/{globalrole}`]: {
          get: getOperation('getGlobalRole', SCOPES.global, [path('globalrole')]),
        },
        [`${prefix}/clusterroles`]: { get: listOperation('listClusterRoles', SCOPES.cluster, []) },
        [`${prefix}/clusterroles/{clusterrole}`]: {
          get: getOperation('getClusterRole', SCOPES.cluster, [path('clusterrole')]),
        },
        [`${prefix}/workspaces/{workspace}/workspaceroles`]: {
          get: listOperation('listWorkspaceRoles', SCOPES.workspace, ws),
        },
        [`${prefix}/workspaces/{workspace}/workspaceroles/{workspacerole}`]: {
          get: getOperation('getWorkspaceRole', SCOPES.workspace, [...ws, path('workspacerole')]),
        },
        [`${prefix}/namespaces/{namespace}/roles`]: {
          get: listOperation('listNamespaceRoles', SCOPES.namespace, ns),
        },
        [`${prefix}/namespaces/{namespace}/roles/{role}`]: {
          get: getOperation('getNamespaceRole', SCOPES.namespace, [...ns, path('role')]),
        },
      }).map(([p, item]) => [p, withWrites(p, item)]),
    ),
  };
}
