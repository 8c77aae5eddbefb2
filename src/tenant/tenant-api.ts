import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  listEnvelope,
  schemaRef,
  statusResponse,
  type ApiContext,
  type ApiDescription,
  type Parameter,
  type PathItem,
} from '../http/openapi-components.ts';
import { pagingParameters } from '../list-query/list-query-api.ts';
import { LABEL_SELECTOR_PATTERN } from '../list-query/label-selector.ts';

const selector = (description: string): Parameter['schema'] => ({
  type: 'string',
  pattern: LABEL_SELECTOR_PATTERN,
  description,
});

/** The v1alpha3 list query (src/list-query/): each known parameter at most once; malformed → 400 naming it. */
const listParameters: Parameter[] = [
  ...pagingParameters('items', 'Default `false`: newest first.'),
  {
    name: 'sortBy',
    in: 'query',
    description:
      '`createTime` is `creationTimestamp` (so is update time: these objects have no other); ties broken by name.',
    schema: {
      type: 'string',
      enum: ['name', 'creationTimestamp', 'createTime', 'lastUpdateTimestamp', 'updateTime'],
      default: 'creationTimestamp',
    },
  },
  {
    name: 'name',
    in: 'query',
    description: 'Case-sensitive substring of the name.',
    schema: { type: 'string' },
  },
  { name: 'names', in: 'query', description: 'Comma-separated exact names.', schema: { type: 'string' } },
  { name: 'uid', in: 'query', description: 'Exact `metadata.uid`.', schema: { type: 'string' } },
  {
    name: 'labelSelector',
    in: 'query',
    description: 'Kubernetes label selector (grammar as for the node list).',
    schema: selector('label selector'),
  },
  {
    name: 'label',
    in: 'query',
    description: 'Selector over labels (both must hold).',
    schema: selector('label selector'),
  },
  {
    name: 'annotation',
    in: 'query',
    description: 'Selector over annotations.',
    schema: selector('selector'),
  },
  {
    name: 'alias',
    in: 'query',
    description: 'Case-sensitive substring of the `<platform>.io/alias-name` annotation.',
    schema: { type: 'string' },
  },
];

const pathParameter = (name: string): Parameter => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string' },
});

const common = {
  '401': statusResponse('No or invalid bearer token.'),
  '503': statusResponse('The kube-apiserver cannot be read, or authorization cannot be decided.'),
  default: DEFAULT_STATUS_RESPONSE,
};

/** The tenant API: workspaces (the original's WorkspaceTemplates and Workspaces) and the namespaces of a workspace. */
export function tenantApi(ctx: ApiContext): ApiDescription {
  const base = `/kapis/tenant.${ctx.platformName}.io`;
  const visibility =
    'Kubernetes RBAC `list` on the resource (group `tenant.<platform>.io`): all; else those a WorkspaceRoleBinding ' +
    'names the caller (or a group of theirs) in, and those RBAC lets the caller `get` by name. Not installed: empty.';
  const list = (operationId: string, summary: string, item: string): PathItem => ({
    get: {
      operationId,
      tags: ['tenant'],
      summary,
      description: visibility,
      security: BEARER,
      parameters: listParameters,
      responses: {
        '200': jsonResponse('A page of the visible items.', schemaRef(`${item}List`)),
        '400': statusResponse('A known query parameter is malformed or repeated; the message names it.'),
        ...common,
      },
    },
  });
  const one = (
    operationId: string,
    summary: string,
    item: string,
    parameters: Parameter[],
    forbidden: string,
  ): PathItem => ({
    get: {
      operationId,
      tags: ['tenant'],
      summary,
      security: BEARER,
      parameters,
      responses: {
        '200': jsonResponse(`The ${item}, as the kube-apiserver stores it.`, schemaRef(item)),
        '403': statusResponse(forbidden),
        '404': statusResponse('No such object (or its resource type is not installed).'),
        ...common,
      },
    },
  });
  const workspaceForbidden =
    'The caller may not see it: neither RBAC `get` on it by name nor a WorkspaceRoleBinding naming them (whether or not it exists).';
  const object = (kind: string, description: string) => ({
    type: 'object',
    description,
    required: ['metadata'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { const: kind },
      metadata: { type: 'object', required: ['name'] },
    },
  });
  return {
    tags: [{ name: 'tenant', description: 'Workspaces and their namespaces (the original’s tenant API).' }],
    schemas: {
      WorkspaceTemplate: object(
        'WorkspaceTemplate',
        'A WorkspaceTemplate (`tenant.<platform>.io/v1alpha2`) as stored.',
      ),
      WorkspaceTemplateList: listEnvelope('WorkspaceTemplate'),
      Workspace: object('Workspace', 'A Workspace (`tenant.<platform>.io/v1alpha1`) as stored.'),
      WorkspaceList: listEnvelope('Workspace'),
      Namespace: object('Namespace', 'A Namespace (core/v1) as the kube-apiserver returns it.'),
      NamespaceList: listEnvelope('Namespace'),
    },
    paths: {
      [`${base}/v1alpha3/workspacetemplates`]: list(
        'listWorkspaceTemplates',
        'Workspace templates the caller may see',
        'WorkspaceTemplate',
      ),
      [`${base}/v1alpha3/workspacetemplates/{workspace}`]: one(
        'getWorkspaceTemplate',
        'One workspace template',
        'WorkspaceTemplate',
        [pathParameter('workspace')],
        workspaceForbidden,
      ),
      [`${base}/v1alpha3/workspaces`]: list(
        'listWorkspacesV1alpha3',
        'Workspaces the caller may see',
        'Workspace',
      ),
      [`${base}/v1alpha3/workspaces/{workspace}`]: one(
        'getWorkspaceV1alpha3',
        'One workspace',
        'Workspace',
        [pathParameter('workspace')],
        workspaceForbidden,
      ),
      [`${base}/v1alpha2/workspaces`]: list(
        'listWorkspaces',
        'Workspaces the caller may see (the console’s call for servers before 3.3)',
        'Workspace',
      ),
      [`${base}/v1alpha2/workspaces/{workspace}`]: one(
        'getWorkspace',
        'One workspace',
        'Workspace',
        [pathParameter('workspace')],
        workspaceForbidden,
      ),
      [`${base}/v1alpha2/workspaces/{workspace}/namespaces`]: {
        get: {
          operationId: 'listWorkspaceNamespaces',
          tags: ['tenant'],
          summary: 'Namespaces labelled `<platform>.io/workspace={workspace}` the caller may see',
          description:
            'RBAC `list` on namespaces: all of them; else those RBAC lets the caller `get` (a RoleBinding in the namespace suffices).',
          security: BEARER,
          parameters: [pathParameter('workspace'), ...listParameters],
          responses: {
            '200': jsonResponse('A page of namespaces.', schemaRef('NamespaceList')),
            '400': statusResponse('A known query parameter is malformed or repeated; the message names it.'),
            ...common,
          },
        },
      },
      [`${base}/v1alpha2/workspaces/{workspace}/namespaces/{namespace}`]: one(
        'getWorkspaceNamespace',
        'One namespace of a workspace',
        'Namespace',
        [pathParameter('workspace'), pathParameter('namespace')],
        'RBAC does not let the caller `get` the namespace.',
      ),
    },
  };
}
