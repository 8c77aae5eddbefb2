import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  schemaRef,
  statusResponse,
  type ApiDescription,
  type Operation,
  type Parameter,
} from '../http/openapi-components.ts';
import { iamPrefix } from './iam-paths.ts';

const noStore = { 'Cache-Control': { schema: { const: 'no-store' } } };
const path = (name: string): Parameter => ({ name, in: 'path', required: true, schema: { type: 'string' } });

function operation(
  operationId: string,
  summary: string,
  resource: string,
  parameters: Parameter[],
): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary,
    description:
      'From the original’s role objects (binding → role → its `iam.<platform>.io/aggregation-roles` → those role templates) when its GlobalRoles are installed; otherwise derived from Kubernetes RBAC (docs/console-compat.md). Oneself, or Kubernetes RBAC `get` on the path’s resource and subresource for another user.',
    security: BEARER,
    parameters,
    responses: {
      '200': jsonResponse(
        'The role templates, newest first; `[]` without a binding.',
        { type: 'array', items: schemaRef('RoleTemplate') },
        noStore,
      ),
      '401': statusResponse('No or invalid bearer token.'),
      '403': statusResponse(`Another user without RBAC \`get\` on \`${resource}\`.`),
      '404': statusResponse('No such user.'),
      '503': statusResponse('The role caches are starting, or authorization cannot be checked.'),
      default: DEFAULT_STATUS_RESPONSE,
    },
  };
}

/** The role templates of a member at the global, cluster, workspace and namespace scope. */
export function memberRolesApi(ctx: { platformName: string }): ApiDescription {
  const prefix = iamPrefix(ctx.platformName);
  return {
    schemas: {
      RoleTemplate: {
        type: 'object',
        description:
          'A GlobalRole, ClusterRole, WorkspaceRole or Role; the console reads `metadata.annotations["iam.<platform>.io/role-template-rules"]`, JSON `{module: action}`.',
        required: ['metadata'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { enum: ['GlobalRole', 'ClusterRole', 'WorkspaceRole', 'Role'] },
          metadata: { type: 'object', required: ['name'] },
          rules: { type: 'array' },
        },
      },
    },
    paths: {
      [`${prefix}/users/{user}/globalroles`]: {
        get: operation(
          'listUserGlobalRoleTemplates',
          'Role templates of a user’s global role',
          'users/globalroles',
          [path('user')],
        ),
      },
      [`${prefix}/clustermembers/{clustermember}/clusterroles`]: {
        get: operation(
          'listClusterMemberRoleTemplates',
          'Role templates of a user’s cluster role',
          'clustermembers/clusterroles',
          [path('clustermember')],
        ),
      },
      [`${prefix}/workspaces/{workspace}/workspacemembers/{workspacemember}/workspaceroles`]: {
        get: operation(
          'listWorkspaceMemberRoleTemplates',
          'Role templates of a user’s roles in a workspace',
          'workspacemembers/workspaceroles',
          [path('workspace'), path('workspacemember')],
        ),
      },
      [`${prefix}/namespaces/{namespace}/members/{member}/roles`]: {
        get: operation(
          'listNamespaceMemberRoleTemplates',
          'Role templates of a user’s roles in a namespace',
          'members/roles',
          [path('namespace'), path('member')],
        ),
      },
    },
  };
}
