import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  statusResponse,
  type Operation,
  type Parameter,
  type PathItem,
  type Schema,
} from '../http/openapi-components.ts';
import { iamPrefix } from './iam-paths.ts';

const path = (name: string): Parameter => ({ name, in: 'path', required: true, schema: { type: 'string' } });

const MEMBER: Schema = {
  type: 'object',
  required: ['username', 'roleRef'],
  properties: {
    username: { type: 'string', description: 'The User to bind.' },
    roleRef: { type: 'string', description: 'The role at this scope to bind them to.' },
  },
};
const MEMBERS: Schema = { type: 'array', items: MEMBER };
const json = (schema: Schema) => ({ required: true, content: { 'application/json': { schema } } });

interface ScopeText {
  title: string;
  binding: string;
  role: string;
  rbac: string;
  /** Who writes, and who decides. */
  how: string;
  /** What a 404 says is unknown. */
  unknown: string;
}

const IMPERSONATED =
  'Written as the caller (impersonated), so Kubernetes RBAC decides, including its escalation prevention: binding a role that grants what the caller does not hold is refused (403).';

const SCOPES: Record<'cluster' | 'workspace' | 'namespace', ScopeText> = {
  cluster: {
    title: 'the cluster',
    binding: 'ClusterRoleBinding',
    role: 'ClusterRole',
    rbac: '`clusterrolebindings`',
    how: IMPERSONATED,
    unknown: 'An unknown user or ClusterRole; the message names it.',
  },
  workspace: {
    title: 'a workspace',
    binding: 'WorkspaceRoleBinding labelled `<platform>.io/workspace: {workspace}`',
    role: 'WorkspaceRole of the workspace',
    rbac: '`workspacerolebindings` in `iam.<platform>.io` (or being bound to the workspace’s `{workspace}-admin` role)',
    how: 'Authorized first (a SubjectAccessReview as the caller, or the caller is bound to `{workspace}-admin`), then written by the server.',
    unknown:
      'An unknown user, workspace (WorkspaceTemplate) or WorkspaceRole of the workspace; the message names it.',
  },
  namespace: {
    title: 'a project (namespace)',
    binding: 'RoleBinding in the namespace',
    role: 'Role in the namespace',
    rbac: '`rolebindings` in the namespace',
    how: IMPERSONATED,
    unknown: 'An unknown user, Role of the namespace or namespace; the message names it.',
  },
};

function errors(scope: ScopeText, verb: string, extra: Record<string, ReturnType<typeof statusResponse>>) {
  return {
    '401': statusResponse('No or invalid bearer token.'),
    '403': statusResponse(
      `Without RBAC \`${verb}\` ${scope.rbac}${scope.how === IMPERSONATED ? ', or Kubernetes refused the write as the caller (escalation)' : ''}.`,
    ),
    ...extra,
    '503': statusResponse('Authorization cannot be checked, or the kube-apiserver is unreachable.'),
    default: DEFAULT_STATUS_RESPONSE,
  };
}

const badBody = statusResponse(
  'Malformed JSON, or not the expected shape; the message names the field. A project of a workspace: a user who is not a member of the workspace.',
);
const tooLarge = statusResponse('The body is over 256 KiB.');
const unknown = (scope: ScopeText) => statusResponse(scope.unknown);

function invite(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `Invite members to ${scope.title}`,
    description: `Binds each user to its role with a ${scope.binding} named \`{username}-{roleRef}\`, labelled \`iam.<platform>.io/user-ref\`, and removes the user’s other bindings there. ${scope.how} The whole list is checked before anything is written (users, roles, for a project its workspace membership and a dry run of each binding as the caller): a refusal writes nothing.`,
    security: BEARER,
    parameters,
    requestBody: json(MEMBERS),
    responses: {
      '200': jsonResponse('The members, as sent.', MEMBERS),
      '400': badBody,
      ...errors(scope, 'create', { '404': unknown(scope), '413': tooLarge }),
    },
  };
}

function change(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `Change a member’s role in ${scope.title}`,
    description: `As inviting that one user: \`username\` must be the one in the path. ${scope.how}`,
    security: BEARER,
    parameters,
    requestBody: json(MEMBER),
    responses: {
      '200': jsonResponse('The member, as sent.', MEMBER),
      '400': badBody,
      ...errors(scope, scope === SCOPES.workspace ? 'update' : 'create', {
        '404': unknown(scope),
        '413': tooLarge,
      }),
    },
  };
}

function remove(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `Remove a member from ${scope.title}`,
    description: `Deletes the user’s bindings there (a binding naming others too: the user taken out of it)${scope === SCOPES.workspace ? ', and first the RoleBindings naming only them in the workspace’s projects' : ''}. ${scope.how}`,
    security: BEARER,
    parameters,
    responses: {
      '200': jsonResponse('Done.', { type: 'object', properties: { message: { const: 'success' } } }),
      ...errors(scope, 'delete', { '404': statusResponse('An unknown user, or not a member here.') }),
    },
  };
}

/** The write operations on the members of the cluster, a workspace and a project, by path (merged into the members paths). */
export function memberWriteOperations(platformName: string): Record<string, PathItem> {
  const prefix = iamPrefix(platformName);
  const ns = [path('namespace')];
  return {
    [`${prefix}/clustermembers`]: { post: invite('createClusterMembers', SCOPES.cluster, []) },
    [`${prefix}/clustermembers/{clustermember}`]: {
      put: change('updateClusterMember', SCOPES.cluster, [path('clustermember')]),
      delete: remove('removeClusterMember', SCOPES.cluster, [path('clustermember')]),
    },
    [`${prefix}/workspaces/{workspace}/workspacemembers`]: {
      post: invite('createWorkspaceMembers', SCOPES.workspace, [path('workspace')]),
    },
    [`${prefix}/workspaces/{workspace}/workspacemembers/{workspacemember}`]: {
      put: change('updateWorkspaceMember', SCOPES.workspace, [path('workspace'), path('workspacemember')]),
      delete: remove('removeWorkspaceMember', SCOPES.workspace, [path('workspace'), path('workspacemember')]),
    },
    [`${prefix}/namespaces/{namespace}/members`]: {
      post: invite('createNamespaceMembers', SCOPES.namespace, ns),
    },
    [`${prefix}/namespaces/{namespace}/members/{member}`]: {
      put: change('updateNamespaceMember', SCOPES.namespace, [...ns, path('member')]),
      delete: remove('removeNamespaceMember', SCOPES.namespace, [...ns, path('member')]),
    },
  };
}
