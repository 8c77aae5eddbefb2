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
  type Reference,
  type Response,
  type Schema,
} from '../http/openapi-components.ts';
import { metadataListParameters } from '../list-query/list-query-api.ts';
import { iamPrefix } from './iam-paths.ts';

const noStore = { 'Cache-Control': { schema: { const: 'no-store' } } };
const path = (name: string): Parameter => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const json = (schema: Schema | Reference) => ({
  required: true,
  content: { 'application/json': { schema } },
});
const SUCCESS = jsonResponse('Done.', { type: 'object', properties: { message: { const: 'success' } } });

const WORKSPACE_READ =
  'RBAC `list` on the resource in its group, or seeing the workspace (a member of it, or RBAC `get` on its WorkspaceTemplate)';
const WORKSPACE_WRITE =
  'RBAC on the resource in `iam.<platform>.io` with the verb, or being bound to the workspace’s `{workspace}-admin` role; then written by the server';

function errors(extra: Record<string, Response>, who: string): Record<string, Response> {
  return {
    '401': statusResponse('No or invalid bearer token.'),
    '403': statusResponse(`Without ${who}.`),
    ...extra,
    '503': statusResponse(
      'The caches are starting, authorization cannot be checked, or the kube-apiserver is unreachable.',
    ),
    default: DEFAULT_STATUS_RESPONSE,
  };
}

const badBody = statusResponse('Malformed JSON, or not the expected shape; the message names the field.');
const tooLarge = statusResponse('The body is over 256 KiB.');

function op(
  operationId: string,
  summary: string,
  description: string,
  parameters: Parameter[],
  responses: Record<string, Response>,
  requestBody?: Operation['requestBody'],
): Operation {
  return {
    operationId,
    tags: ['iam'],
    summary,
    description,
    security: BEARER,
    parameters,
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/** A workspace's groups, their members (GroupBindings) and their role bindings in the workspace and its projects. */
export function groupsApi(ctx: { platformName: string }): ApiDescription {
  const prefix = iamPrefix(ctx.platformName);
  const ws = [path('workspace')];
  const group = [...ws, path('group')];
  const unknownWorkspace = 'No such workspace (WorkspaceTemplate)';
  const list = (items: string) => [...ws, ...metadataListParameters(items)];
  const groupBody = json(schemaRef('IamGroup'));
  const mergePatch = {
    required: true,
    content: {
      'application/merge-patch+json': { schema: { type: 'object' } },
      'application/json': { schema: { type: 'object' } },
    },
  };
  const groupWrite = (verb: string) => `RBAC \`${verb}\` \`groups\` — ${WORKSPACE_WRITE}`;
  const memberList: Schema = {
    type: 'array',
    items: {
      type: 'object',
      required: ['userName', 'groupName'],
      properties: { userName: { type: 'string' }, groupName: { type: 'string' } },
    },
  };
  const bindings = (kind: string): Schema => ({ type: 'array', items: schemaRef(kind) });
  return {
    schemas: {
      IamGroup: {
        type: 'object',
        description:
          'A Group of users in a workspace (`iam.<platform>.io/v1alpha2`, cluster-scoped), labelled `<platform>.io/workspace`; `metadata.generateName` is its name in the console, `iam.<platform>.io/group-parent` names its parent group.',
        required: ['metadata'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { const: 'Group' },
          metadata: { type: 'object' },
        },
      },
      IamGroupList: listEnvelope('IamGroup'),
      IamGroupBinding: {
        type: 'object',
        description: 'A user’s membership of a group: `users` are members of `groupRef.name`.',
        required: ['metadata'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { const: 'GroupBinding' },
          metadata: { type: 'object' },
          users: { type: 'array', items: { type: 'string' } },
          groupRef: { type: 'object' },
        },
      },
      IamGroupBindingList: listEnvelope('IamGroupBinding'),
      IamRoleBinding: {
        type: 'object',
        description: 'A WorkspaceRoleBinding or Kubernetes RoleBinding.',
        required: ['metadata', 'roleRef'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object' },
          subjects: { type: 'array' },
          roleRef: { type: 'object' },
        },
      },
      IamRoleBindingList: listEnvelope('IamRoleBinding'),
    },
    paths: {
      [`${prefix}/workspaces/{workspace}/groups`]: {
        get: op(
          'listWorkspaceGroups',
          'List the groups of a workspace',
          `The Groups labelled with the workspace, from a watch-backed cache, in the v1alpha3 list envelope. Who: ${WORKSPACE_READ}.`,
          list('groups'),
          {
            '200': jsonResponse('A page of groups.', schemaRef('IamGroupList'), noStore),
            '400': statusResponse('A query parameter is malformed or repeated; the message names it.'),
            ...errors(
              { '404': statusResponse(`${unknownWorkspace}, or Groups are not installed.`) },
              WORKSPACE_READ,
            ),
          },
        ),
        post: op(
          'createWorkspaceGroup',
          'Create a group in a workspace',
          'A Group named by the kube-apiserver from `metadata.generateName` (required; unique among the workspace’s groups, else 409; `metadata.name` is refused), labelled with the workspace; a parent named by `iam.<platform>.io/group-parent` must be a group of the workspace.',
          ws,
          {
            '200': jsonResponse('The group as stored.', schemaRef('IamGroup')),
            '400': badBody,
            ...errors(
              {
                '404': statusResponse(`${unknownWorkspace}, or no such parent group.`),
                '409': statusResponse('A group of that generateName exists in the workspace.'),
                '413': tooLarge,
              },
              groupWrite('create'),
            ),
          },
          groupBody,
        ),
      },
      [`${prefix}/workspaces/{workspace}/groups/{group}`]: {
        get: op('getWorkspaceGroup', 'One group of a workspace', `Who: ${WORKSPACE_READ}.`, group, {
          '200': jsonResponse('The group.', schemaRef('IamGroup'), noStore),
          ...errors(
            { '404': statusResponse('No such group in the workspace, or no such workspace.') },
            WORKSPACE_READ,
          ),
        }),
        put: op(
          'updateWorkspaceGroup',
          'Replace a group',
          'The whole group (also served with a trailing slash, as the original registers it); `metadata.name` must be the path’s; the workspace label is the server’s; without `metadata.resourceVersion` the stored one is used.',
          group,
          {
            '200': jsonResponse('The group as stored.', schemaRef('IamGroup')),
            '400': badBody,
            ...errors(
              {
                '404': statusResponse('No such group in the workspace, parent group or workspace.'),
                '409': statusResponse('A stale resourceVersion.'),
                '413': tooLarge,
              },
              groupWrite('update'),
            ),
          },
          groupBody,
        ),
        patch: op(
          'patchWorkspaceGroup',
          'Patch a group',
          'A JSON merge patch of the stored group (also served with a trailing slash), written whole with its resourceVersion.',
          group,
          {
            '200': jsonResponse('The group as stored.', schemaRef('IamGroup')),
            '400': badBody,
            ...errors(
              {
                '404': statusResponse('No such group in the workspace, parent group or workspace.'),
                '409': statusResponse('The group changed meanwhile.'),
                '413': tooLarge,
                '415': statusResponse('Another media type than a merge patch or JSON.'),
              },
              groupWrite('patch'),
            ),
          },
          mergePatch,
        ),
        delete: op(
          'deleteWorkspaceGroup',
          'Delete a group',
          'The group and its subgroups, each with its members (GroupBindings; the group taken out of the users’ `spec.groups` first) and its role bindings (labelled `iam.<platform>.io/group-ref`). A failure part-way is finished by deleting again.',
          group,
          {
            '200': SUCCESS,
            ...errors(
              { '404': statusResponse('No such group in the workspace, or no such workspace.') },
              groupWrite('delete'),
            ),
          },
        ),
      },
      [`${prefix}/workspaces/{workspace}/groupbindings`]: {
        get: op(
          'listWorkspaceGroupBindings',
          'List the group memberships of a workspace',
          `The GroupBindings labelled with the workspace (select by \`iam.<platform>.io/group-ref\` and \`user-ref\` with \`labelSelector\`). Who: ${WORKSPACE_READ}.`,
          list('group bindings'),
          {
            '200': jsonResponse('A page of group bindings.', schemaRef('IamGroupBindingList'), noStore),
            '400': statusResponse('A query parameter is malformed or repeated; the message names it.'),
            ...errors(
              { '404': statusResponse(`${unknownWorkspace}, or GroupBindings are not installed.`) },
              WORKSPACE_READ,
            ),
          },
        ),
        post: op(
          'createWorkspaceGroupBindings',
          'Add users to groups',
          'A GroupBinding per `{userName, groupName}` (named `{group}-{user}-…`, labelled `iam.<platform>.io/user-ref`, `…/group-ref` and the workspace), and the group added to the user’s `spec.groups` (sent as a Kubernetes group when the server acts as the user). The list is checked whole first.',
          ws,
          {
            '200': jsonResponse('The GroupBindings made.', bindings('IamGroupBinding')),
            '400': badBody,
            ...errors(
              {
                '404': statusResponse('An unknown user, group of the workspace, or workspace.'),
                '409': statusResponse('A user is already a member of that group.'),
                '413': tooLarge,
              },
              `RBAC \`create\` \`groupbindings\` — ${WORKSPACE_WRITE}`,
            ),
          },
          json(memberList),
        ),
      },
      [`${prefix}/workspaces/{workspace}/groupbindings/{groupbinding}`]: {
        delete: op(
          'deleteWorkspaceGroupBinding',
          'Remove a user from a group',
          'The group taken out of the users’ `spec.groups` (unless another binding keeps them in), then the GroupBinding deleted.',
          [...ws, path('groupbinding')],
          {
            '200': SUCCESS,
            ...errors(
              { '404': statusResponse('No such GroupBinding in the workspace, or no such workspace.') },
              `RBAC \`delete\` \`groupbindings\` — ${WORKSPACE_WRITE}`,
            ),
          },
        ),
      },
      [`${prefix}/workspaces/{workspace}/rolebindings`]: {
        get: op(
          'listWorkspaceProjectRoleBindings',
          'List the RoleBindings of a workspace’s projects',
          'The Kubernetes RoleBindings of every namespace labelled with the workspace, filtered and sorted by the list query, as a plain JSON list (the original’s shape; the console selects `iam.<platform>.io/group-ref`). Who: RBAC `list` `rolebindings` everywhere, or seeing the workspace (then only the projects where RBAC lets the caller list RoleBindings).',
          list('role bindings'),
          {
            '200': jsonResponse('The RoleBindings.', bindings('IamRoleBinding'), noStore),
            '400': statusResponse('A query parameter is malformed or repeated; the message names it.'),
            ...errors({ '404': statusResponse(unknownWorkspace) }, WORKSPACE_READ),
          },
        ),
      },
      [`${prefix}/workspaces/{workspace}/workspacerolebindings`]: {
        get: op(
          'listWorkspaceRoleBindings',
          'List the WorkspaceRoleBindings of a workspace',
          'The WorkspaceRoleBindings labelled with the workspace, from a watch-backed cache, in the v1alpha3 list envelope. Who: as for the workspace’s members.',
          list('role bindings'),
          {
            '200': jsonResponse('A page of bindings.', schemaRef('IamRoleBindingList'), noStore),
            '400': statusResponse('A query parameter is malformed or repeated; the message names it.'),
            ...errors({ '404': statusResponse(unknownWorkspace) }, WORKSPACE_READ),
          },
        ),
        post: op(
          'createWorkspaceRoleBindings',
          'Bind groups (or users) to workspace roles',
          'A list of WorkspaceRoleBindings; each named `{first subject}-{role}-…`, labelled `iam.<platform>.io/group-ref` (or `user-ref`) and the workspace. The role must be a WorkspaceRole of the workspace; subjects are users or groups of the workspace. Checked whole before any write.',
          ws,
          {
            '200': jsonResponse('The bindings made.', bindings('IamRoleBinding')),
            '400': badBody,
            ...errors(
              {
                '404': statusResponse('An unknown workspace, WorkspaceRole of the workspace, user or group.'),
                '409': statusResponse('That subject is already bound to that role here.'),
                '413': tooLarge,
              },
              `RBAC \`create\` \`workspacerolebindings\` — ${WORKSPACE_WRITE}`,
            ),
          },
          json(bindings('IamRoleBinding')),
        ),
      },
      [`${prefix}/workspaces/{workspace}/workspacerolebindings/{rolebinding}`]: {
        delete: op(
          'deleteWorkspaceRoleBinding',
          'Delete a WorkspaceRoleBinding',
          'A binding labelled with the workspace.',
          [...ws, path('rolebinding')],
          {
            '200': SUCCESS,
            ...errors(
              { '404': statusResponse('No such binding in the workspace, or no such workspace.') },
              `RBAC \`delete\` \`workspacerolebindings\` — ${WORKSPACE_WRITE}`,
            ),
          },
        ),
      },
      [`${prefix}/namespaces/{namespace}/rolebindings`]: {
        post: op(
          'createNamespaceRoleBindings',
          'Bind groups (or users) to project roles',
          'A list of RoleBindings to Roles of the namespace; each named `{first subject}-{role}-…`, labelled `iam.<platform>.io/group-ref` (or `user-ref`). Subjects are users, or groups (of the project’s workspace). Written as the caller (impersonated) after a dry run of each, so Kubernetes RBAC decides, escalation included.',
          [path('namespace')],
          {
            '200': jsonResponse('The bindings made.', bindings('IamRoleBinding')),
            '400': badBody,
            ...errors(
              {
                '404': statusResponse('An unknown namespace, Role, user or group.'),
                '409': statusResponse('That subject is already bound to that role here.'),
                '413': tooLarge,
              },
              'RBAC `create` `rolebindings` in the namespace, or Kubernetes refused the write as the caller (escalation)',
            ),
          },
          json(bindings('IamRoleBinding')),
        ),
      },
      [`${prefix}/namespaces/{namespace}/rolebindings/{rolebinding}`]: {
        delete: op(
          'deleteNamespaceRoleBinding',
          'Delete a RoleBinding of a project',
          'Deleted as the caller (impersonated): Kubernetes RBAC decides.',
          [path('namespace'), path('rolebinding')],
          {
            '200': SUCCESS,
            ...errors(
              { '404': statusResponse('No such RoleBinding.') },
              'RBAC `delete` `rolebindings` in the namespace',
            ),
          },
        ),
      },
    },
  };
}
