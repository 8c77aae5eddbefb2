import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  schemaRef,
  statusResponse,
  type Operation,
  type Parameter,
  type PathItem,
} from '../http/openapi-components.ts';
import { iamPrefix } from './iam-paths.ts';

const path = (name: string): Parameter => ({ name, in: 'path', required: true, schema: { type: 'string' } });

interface ScopeText {
  kind: 'GlobalRole' | 'ClusterRole' | 'WorkspaceRole' | 'Role';
  apiVersion: string;
  title: string;
  rbac: string;
  unknown: string;
  how: string;
}

const IMPERSONATED =
  'Written as the caller (impersonated), so Kubernetes RBAC decides, including its escalation prevention: a role granting what the caller does not hold is refused (403).';
const BY_SERVER = (resource: string) =>
  `Authorized by a SubjectAccessReview as the caller (RBAC on \`${resource}\` in \`iam.<platform>.io\`), then written by the server. Where the original’s CRD is not installed: 404 naming the resource.`;
const AGGREGATION =
  'With the annotation `iam.<platform>.io/aggregation-roles` (a JSON list of role template names, roles of the same kind) the role’s rules are replaced by the union of those templates’ rules, computed by the server at write time; without it they are kept as sent.';

const SCOPES: Record<'global' | 'cluster' | 'workspace' | 'namespace', ScopeText> = {
  global: {
    kind: 'GlobalRole',
    apiVersion: 'iam.<platform>.io/v1alpha2',
    title: 'a GlobalRole',
    rbac: '`globalroles` in `iam.<platform>.io`',
    unknown:
      'An unknown GlobalRole, a role template named in the aggregation annotation, or GlobalRoles not installed; the message names it.',
    how: BY_SERVER('globalroles'),
  },
  workspace: {
    kind: 'WorkspaceRole',
    apiVersion: 'iam.<platform>.io/v1alpha2',
    title: 'a WorkspaceRole of a workspace',
    rbac: '`workspaceroles` in `iam.<platform>.io`',
    unknown:
      'An unknown workspace (WorkspaceTemplate), WorkspaceRole of the workspace, role template (a WorkspaceRole) named in the aggregation annotation, or WorkspaceRoles not installed; the message names it.',
    how: `${BY_SERVER('workspaceroles')} The label \`<platform>.io/workspace: {workspace}\` is set by the server.`,
  },
  cluster: {
    kind: 'ClusterRole',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    how: IMPERSONATED,
    title: 'a ClusterRole',
    rbac: '`clusterroles`',
    unknown:
      'An unknown ClusterRole, or a role template named in the aggregation annotation; the message names it.',
  },
  namespace: {
    kind: 'Role',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    how: IMPERSONATED,
    title: 'a Role of a project (namespace)',
    rbac: '`roles` in the namespace',
    unknown:
      'An unknown namespace, Role, or role template (a Role of the namespace) named in the aggregation annotation; the message names it.',
  },
};

const BUILT_IN =
  'Built-in roles — labelled `iam.<platform>.io/role-template`, `<platform>.io/managed-by` or `kubernetes.io/bootstrapping: rbac-defaults`, or annotated `<platform>.io/creator: system` — are refused (403 naming why).';

const role = (scope: ScopeText) => ({
  required: true,
  content: { 'application/json': { schema: schemaRef('IamRole') } },
  description: `A ${scope.kind} (\`${scope.apiVersion}\`); \`metadata.name\` a DNS-1123 subdomain.`,
});

function errors(scope: ScopeText, verb: string, extra: Record<string, ReturnType<typeof statusResponse>>) {
  return {
    '401': statusResponse('No or invalid bearer token.'),
    '403': statusResponse(
      `Without RBAC \`${verb}\` on ${scope.rbac}${scope.how === IMPERSONATED ? '; Kubernetes refused the write as the caller (escalation)' : ''}; or a built-in role.`,
    ),
    '404': statusResponse(scope.unknown),
    ...extra,
    '503': statusResponse('Authorization cannot be checked, or the kube-apiserver is unreachable.'),
    default: DEFAULT_STATUS_RESPONSE,
  };
}

const badBody = statusResponse(
  'Malformed JSON, another kind, a name that is not a DNS-1123 subdomain, a namespace other than the path’s, or an aggregation annotation that is not a JSON list; the message names the field.',
);
const tooLarge = statusResponse('The body is over 256 KiB.');
const unsupported = statusResponse('A Content-Type not accepted here.');
const saved = (scope: ScopeText) => jsonResponse(`The ${scope.kind} as stored.`, schemaRef('IamRole'));

function create(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `Create ${scope.title}`,
    description: `${scope.how} ${AGGREGATION}`,
    security: BEARER,
    parameters,
    requestBody: role(scope),
    responses: {
      '200': saved(scope),
      '400': badBody,
      ...errors(scope, 'create', {
        '409': statusResponse('A role of that name exists.'),
        '413': tooLarge,
        '415': unsupported,
      }),
    },
  };
}

function replace(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `Replace ${scope.title}`,
    description: `The name must be the path’s; without \`metadata.resourceVersion\` the stored one is used. ${scope.how} ${AGGREGATION} ${BUILT_IN}`,
    security: BEARER,
    parameters,
    requestBody: role(scope),
    responses: {
      '200': saved(scope),
      '400': badBody,
      ...errors(scope, 'update', {
        '409': statusResponse('A stale `metadata.resourceVersion`.'),
        '413': tooLarge,
        '415': unsupported,
      }),
    },
  };
}

function patch(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `Patch ${scope.title}`,
    description: `A JSON merge patch (RFC 7386; \`application/merge-patch+json\` or \`application/json\`) of the stored role, the result checked as a whole. ${scope.how} ${AGGREGATION} ${BUILT_IN}`,
    security: BEARER,
    parameters,
    requestBody: {
      required: true,
      content: {
        'application/merge-patch+json': { schema: { type: 'object' } },
        'application/json': { schema: { type: 'object' } },
      },
    },
    responses: {
      '200': saved(scope),
      '400': badBody,
      ...errors(scope, 'patch', {
        '409': statusResponse('A stale `metadata.resourceVersion` in the patch, or a concurrent change.'),
        '413': tooLarge,
        '415': unsupported,
      }),
    },
  };
}

function remove(operationId: string, scope: ScopeText, parameters: Parameter[]): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary: `Delete ${scope.title}`,
    description: `${scope.how} ${BUILT_IN}`,
    security: BEARER,
    parameters,
    responses: {
      '200': jsonResponse('Done.', { type: 'object', properties: { message: { const: 'success' } } }),
      ...errors(scope, 'delete', {}),
    },
  };
}

/** The write operations on the roles of the four scopes, by path (merged into the role paths). */
export function roleWriteOperations(platformName: string): Record<string, PathItem> {
  const prefix = iamPrefix(platformName);
  const ns = [path('namespace')];
  const cr = [path('clusterrole')];
  const r = [...ns, path('role')];
  const gr = [path('globalrole')];
  const ws = [path('workspace')];
  const wr = [...ws, path('workspacerole')];
  return {
    [`${prefix}/globalroles`]: { post: create('createGlobalRole', SCOPES.global, []) },
    [`${prefix}/globalroles/{globalrole}`]: {
      put: replace('updateGlobalRole', SCOPES.global, gr),
      patch: patch('patchGlobalRole', SCOPES.global, gr),
      delete: remove('deleteGlobalRole', SCOPES.global, gr),
    },
    [`${prefix}/workspaces/{workspace}/workspaceroles`]: {
      post: create('createWorkspaceRole', SCOPES.workspace, ws),
    },
    [`${prefix}/workspaces/{workspace}/workspaceroles/{workspacerole}`]: {
      put: replace('updateWorkspaceRole', SCOPES.workspace, wr),
      patch: patch('patchWorkspaceRole', SCOPES.workspace, wr),
      delete: remove('deleteWorkspaceRole', SCOPES.workspace, wr),
    },
    [`${prefix}/clusterroles`]: { post: create('createClusterRole', SCOPES.cluster, []) },
    [`${prefix}/clusterroles/{clusterrole}`]: {
      put: replace('updateClusterRole', SCOPES.cluster, cr),
      patch: patch('patchClusterRole', SCOPES.cluster, cr),
      delete: remove('deleteClusterRole', SCOPES.cluster, cr),
    },
    [`${prefix}/namespaces/{namespace}/roles`]: { post: create('createNamespaceRole', SCOPES.namespace, ns) },
    [`${prefix}/namespaces/{namespace}/roles/{role}`]: {
      put: replace('updateNamespaceRole', SCOPES.namespace, r),
      patch: patch('patchNamespaceRole', SCOPES.namespace, r),
      delete: remove('deleteNamespaceRole', SCOPES.namespace, r),
    },
  };
}
