import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  listEnvelope,
  schemaRef,
  statusResponse,
  type ApiContext,
  type ApiDescription,
  type Operation,
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
  const body = (schema: string, types: string[]): Operation['requestBody'] => ({
    required: true,
    content: Object.fromEntries(types.map((t) => [t, { schema: schemaRef(schema) }])),
  });
  const objectTypes = ['application/json'];
  const patchTypes = ['application/merge-patch+json', 'application/json-patch+json', 'application/json'];
  const writeErrors = (what: string) => ({
    '400': statusResponse(
      'Not a valid object: malformed JSON, another kind or apiVersion, a name that is not a DNS-1123 label, a name that differs from the path’s, a bad patch; the message names the field.',
    ),
    '403': statusResponse(`RBAC does not let the caller ${what}.`),
    '413': statusResponse('The body is larger than 256 KiB.'),
    '415': statusResponse('Another media type than those listed.'),
    ...common,
  });
  const write = (
    operationId: string,
    summary: string,
    options: {
      parameters: Parameter[];
      body?: Operation['requestBody'];
      answer: string;
      schema: string;
      forbidden: string;
      extra?: Record<string, ReturnType<typeof statusResponse>>;
      description?: string;
    },
  ): Operation => ({
    operationId,
    tags: ['tenant'],
    summary,
    ...(options.description ? { description: options.description } : {}),
    security: BEARER,
    parameters: options.parameters,
    ...(options.body ? { requestBody: options.body } : {}),
    responses: {
      '200': jsonResponse(options.answer, schemaRef(options.schema)),
      ...writeErrors(options.forbidden),
      ...options.extra,
    },
  });
  const deleteOptions = {
    required: false,
    content: { 'application/json': { schema: schemaRef('DeleteOptions') } },
  };
  const templateWrites = (prefix: string): { collection: PathItem; item: PathItem } => {
    const ws = [pathParameter('workspace')];
    const conflict = statusResponse(
      'A stale `metadata.resourceVersion`: the template changed since it was read.',
    );
    const missing = statusResponse('No such workspace template.');
    return {
      collection: {
        post: write(`create${prefix}`, 'Create a workspace template', {
          parameters: [],
          body: body('WorkspaceTemplate', objectTypes),
          answer:
            'The created template; the reconciler makes its Workspace, default roles and the manager’s binding.',
          schema: 'WorkspaceTemplate',
          forbidden: '`create` `workspacetemplates` in the tenant group',
          extra: { '409': statusResponse('A workspace template of that name exists.') },
          description:
            'The server sets the `<platform>.io/creator` annotation to the caller. `kind` and `apiVersion` may be left out.',
        }),
      },
      item: {
        put: write(`replace${prefix}`, 'Replace a workspace template', {
          parameters: ws,
          body: body('WorkspaceTemplate', objectTypes),
          answer: 'The template as stored.',
          schema: 'WorkspaceTemplate',
          forbidden: '`update` the template',
          extra: { '404': missing, '409': conflict },
        }),
        patch: write(`patch${prefix}`, 'Patch a workspace template', {
          parameters: ws,
          body: body('Patch', patchTypes),
          answer: 'The template as stored.',
          schema: 'WorkspaceTemplate',
          forbidden: '`patch` the template',
          extra: { '404': missing, '409': conflict },
          description: 'A merge patch, or a JSON patch (also as `application/json` with an array).',
        }),
        delete: write(`delete${prefix}`, 'Delete a workspace template', {
          parameters: ws,
          body: deleteOptions,
          answer: '`{"message":"success"}`.',
          schema: 'Deleted',
          forbidden: '`delete` the template',
          extra: { '404': missing },
          description:
            'Its Workspace and its namespaces go with it; with `propagationPolicy: Orphan` the namespaces stay, without their workspace label.',
        }),
      },
    };
  };
  const v1alpha3Templates = templateWrites('WorkspaceTemplate');
  const v1alpha2Templates = templateWrites('WorkspaceTemplateV1alpha2');
  const nsParameters = [pathParameter('workspace'), pathParameter('namespace')];
  const nsMissing = statusResponse('No such namespace in this workspace.');
  const nsConflict = statusResponse('A stale `metadata.resourceVersion`.');
  const toWorkspace =
    'The workspace label, if given, may name another workspace: a move, for a caller who may create namespaces there.';
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
      Patch: {
        description: 'A merge patch (an object) or a JSON patch (an array of operations).',
        anyOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }],
      },
      DeleteOptions: {
        type: 'object',
        properties: {
          kind: { const: 'DeleteOptions' },
          apiVersion: { type: 'string' },
          propagationPolicy: { enum: ['Orphan', 'Background', 'Foreground'] },
        },
      },
      Deleted: {
        type: 'object',
        required: ['message'],
        properties: { message: { const: 'success' } },
      },
    },
    paths: {
      [`${base}/v1alpha3/workspacetemplates`]: {
        ...list('listWorkspaceTemplates', 'Workspace templates the caller may see', 'WorkspaceTemplate'),
        ...v1alpha3Templates.collection,
      },
      [`${base}/v1alpha3/workspacetemplates/{workspace}`]: {
        ...one(
          'getWorkspaceTemplate',
          'One workspace template',
          'WorkspaceTemplate',
          [pathParameter('workspace')],
          workspaceForbidden,
        ),
        ...v1alpha3Templates.item,
      },
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
      [`${base}/v1alpha2/workspaces`]: {
        ...list(
          'listWorkspaces',
          'Workspaces the caller may see (the console’s call for servers before 3.3)',
          'Workspace',
        ),
        ...v1alpha2Templates.collection,
      },
      [`${base}/v1alpha2/workspaces/{workspace}`]: {
        ...one(
          'getWorkspace',
          'One workspace',
          'Workspace',
          [pathParameter('workspace')],
          workspaceForbidden,
        ),
        ...v1alpha2Templates.item,
      },
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
        post: write('createWorkspaceNamespace', 'Create a namespace (project) in a workspace', {
          parameters: [pathParameter('workspace')],
          body: body('Namespace', objectTypes),
          answer:
            'The created namespace; the reconciler adds the default project roles and binds the creator as admin.',
          schema: 'Namespace',
          forbidden: 'create namespaces, nor `create` `workspaces/namespaces` of this workspace',
          extra: {
            '404': statusResponse('No such workspace.'),
            '409': statusResponse('A namespace of that name exists.'),
          },
          description:
            'The server sets the `<platform>.io/workspace` label to the path’s workspace (a label naming another is a 400) and the `<platform>.io/creator` annotation to the caller.',
        }),
      },
      [`${base}/v1alpha2/workspaces/{workspace}/namespaces/{namespace}`]: {
        ...one(
          'getWorkspaceNamespace',
          'One namespace of a workspace',
          'Namespace',
          nsParameters,
          'RBAC does not let the caller `get` the namespace.',
        ),
        put: write('replaceWorkspaceNamespace', 'Replace a namespace of a workspace', {
          parameters: nsParameters,
          body: body('Namespace', objectTypes),
          answer: 'The namespace as stored.',
          schema: 'Namespace',
          forbidden: '`update` the namespace',
          extra: { '404': nsMissing, '409': nsConflict },
          description: toWorkspace,
        }),
        patch: write('patchWorkspaceNamespace', 'Patch a namespace of a workspace', {
          parameters: nsParameters,
          body: body('Patch', patchTypes),
          answer: 'The namespace as stored.',
          schema: 'Namespace',
          forbidden: '`patch` the namespace',
          extra: { '404': nsMissing, '409': nsConflict },
          description: toWorkspace,
        }),
        delete: write('deleteWorkspaceNamespace', 'Delete a namespace of a workspace', {
          parameters: nsParameters,
          body: deleteOptions,
          answer: '`{"message":"success"}`.',
          schema: 'Deleted',
          forbidden: '`delete` the namespace',
          extra: { '404': nsMissing },
        }),
      },
      [`${base}/v1alpha2/workspaces/{workspace}/workspacemembers/{member}/namespaces`]: {
        get: {
          operationId: 'listWorkspaceMemberNamespaces',
          tags: ['tenant'],
          summary: 'The namespaces of a workspace one member may see',
          description:
            'For the member themself, or a caller RBAC lets `list` namespaces; the member is asked about as the user alone (without groups).',
          security: BEARER,
          parameters: [pathParameter('workspace'), pathParameter('member'), ...listParameters],
          responses: {
            '200': jsonResponse('A page of namespaces.', schemaRef('NamespaceList')),
            '400': statusResponse('A known query parameter is malformed or repeated; the message names it.'),
            '403': statusResponse('Another member’s, and RBAC does not let the caller list namespaces.'),
            ...common,
          },
        },
      },
    },
  };
}
