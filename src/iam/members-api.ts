import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  schemaRef,
  statusResponse,
  type ApiDescription,
  type Operation,
  type Parameter,
  type PathItem,
} from '../http/openapi-components.ts';
import { metadataListParameters } from '../list-query/list-query-api.ts';
import { iamPrefix } from './iam-paths.ts';
import { memberWriteOperations } from './member-writes-api.ts';

const noStore = { 'Cache-Control': { schema: { const: 'no-store' } } };
const path = (name: string): Parameter => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const text = (name: string, description: string): Parameter => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string' },
});

interface ScopeText {
  title: string;
  /** The bindings its members come from. */
  bindings: string;
  /** The annotation naming a member's role there, and the query parameter filtering by it. */
  annotation: string;
  roleParameter: string;
  rbac: string;
  unknown?: string;
}

const SCOPES: Record<'cluster' | 'workspace' | 'namespace', ScopeText> = {
  cluster: {
    title: 'the cluster’s members',
    bindings: 'Kubernetes ClusterRoleBindings',
    annotation: 'iam.<platform>.io/clusterrole',
    roleParameter: 'clusterrole',
    rbac: 'RBAC `list` `clusterrolebindings`',
  },
  workspace: {
    title: 'a workspace’s members',
    bindings:
      'WorkspaceRoleBindings labelled `<platform>.io/workspace: {workspace}` (none where they are not installed)',
    annotation: 'iam.<platform>.io/workspacerole',
    roleParameter: 'workspacerole',
    rbac: 'RBAC `list` `workspacerolebindings` in `iam.<platform>.io`, or seeing the workspace (a member of it, or RBAC `get` on its WorkspaceTemplate)',
    unknown: 'No such workspace (WorkspaceTemplate).',
  },
  namespace: {
    title: 'a namespace’s members',
    bindings: 'Kubernetes RoleBindings in the namespace',
    annotation: 'iam.<platform>.io/role',
    roleParameter: 'role',
    rbac: 'RBAC `list` `rolebindings` in the namespace',
    unknown: 'No such namespace.',
  },
};

function listOperation(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `List ${scope.title}`,
    description: `The Users named as \`User\` subjects by the ${scope.bindings}, each annotated \`${scope.annotation}\` with its binding’s role (a user bound twice: the first binding by name), in the v1alpha3 list envelope; never a secret (as the users list). Who: ${scope.rbac}.`,
    security: BEARER,
    parameters: [
      ...parameters,
      ...metadataListParameters('members'),
      text('email', 'Exact `spec.email`.'),
      text('ingroup', 'Members whose `spec.groups` holds this group.'),
      text('notingroup', 'Members whose `spec.groups` does not hold this group.'),
      text(scope.roleParameter, 'Only members bound to this role here.'),
    ],
    responses: {
      '200': jsonResponse('A page of members.', schemaRef('UserList'), noStore),
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
    description: `The User, annotated \`${scope.annotation}\` with its role here. Who: ${scope.rbac}.`,
    security: BEARER,
    parameters,
    responses: {
      '200': jsonResponse('The member.', schemaRef('User'), noStore),
      '401': statusResponse('No or invalid bearer token.'),
      '403': statusResponse(`Without ${scope.rbac}.`),
      '404': statusResponse(`No such user, or not a member here.${scope.unknown ? ` ${scope.unknown}` : ''}`),
      '503': statusResponse('The role caches are starting, or authorization cannot be checked.'),
      default: DEFAULT_STATUS_RESPONSE,
    },
  };
}

/** The members of the cluster, of a workspace and of a namespace; the writes of member-writes-api.ts. */
export function membersApi(ctx: { platformName: string }): ApiDescription {
  const prefix = iamPrefix(ctx.platformName);
  const ws = [path('workspace')];
  const ns = [path('namespace')];
  const writes = memberWriteOperations(ctx.platformName);
  const withWrites = (p: string, item: PathItem): PathItem => ({ ...item, ...writes[p] });
  return {
    paths: Object.fromEntries(
      Object.entries({
        [`${prefix}/clustermembers`]: { get: listOperation('listClusterMembers', SCOPES.cluster, []) },
        [`${prefix}/clustermembers/{clustermember}`]: {
          get: getOperation('getClusterMember', SCOPES.cluster, [path('clustermember')]),
        },
        [`${prefix}/workspaces/{workspace}/workspacemembers`]: {
          get: listOperation('listWorkspaceMembers', SCOPES.workspace, ws),
        },
        [`${prefix}/workspaces/{workspace}/workspacemembers/{workspacemember}`]: {
          get: getOperation('getWorkspaceMember', SCOPES.workspace, [...ws, path('workspacemember')]),
        },
        [`${prefix}/namespaces/{namespace}/members`]: {
          get: listOperation('listNamespaceMembers', SCOPES.namespace, ns),
        },
        [`${prefix}/namespaces/{namespace}/members/{member}`]: {
          get: getOperation('getNamespaceMember', SCOPES.namespace, [...ns, path('member')]),
        },
      }).map(([p, item]) => [p, withWrites(p, item)]),
    ),
  };
}
