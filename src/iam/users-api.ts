import {
  BEARER,
  DEFAULT_STATUS_RESPONSE,
  jsonResponse,
  listEnvelope,
  schemaRef,
  statusResponse,
  type ApiDescription,
  type Parameter,
} from '../http/openapi-components.ts';
import { pagingParameters } from '../list-query/list-query-api.ts';
import { LABEL_SELECTOR_PATTERN } from '../list-query/label-selector.ts';
import { iamPrefix } from './iam-paths.ts';

const noStore = { 'Cache-Control': { schema: { const: 'no-store' } } };
const text = (name: string, description: string, extra: Record<string, unknown> = {}): Parameter => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string', ...extra },
});

const listParameters: Parameter[] = [
  ...pagingParameters('users', 'Default `false`: newest (or last by name) first.'),
  text('sortBy', 'Creation time (the default; `createTime` is the same) or `name`; ties by name.', {
    enum: ['name', 'creationTimestamp', 'createTime', 'lastUpdateTimestamp', 'updateTime'],
    default: 'creationTimestamp',
  }),
  text('name', 'Substring of the user name.'),
  text('names', 'Exact user names, comma-separated.'),
  text('uid', 'Exact `metadata.uid`.'),
  text('labelSelector', 'Kubernetes label selector over the users’ labels.', {
    pattern: LABEL_SELECTOR_PATTERN,
  }),
  text('label', 'Like `labelSelector`; both must hold.', { pattern: LABEL_SELECTOR_PATTERN }),
  text('annotation', 'A selector over the users’ annotations.', { pattern: LABEL_SELECTOR_PATTERN }),
  text('alias', 'Substring of the `<platform>.io/alias-name` annotation.'),
  text('email', 'Exact `spec.email`.'),
  text('globalrole', 'Users whose global role (the `iam.<platform>.io/globalrole` annotation) is this.'),
];

/** The users API: one user, and the user list in the v1alpha3 envelope. */
export function usersApi(ctx: { platformName: string }): ApiDescription {
  const prefix = iamPrefix(ctx.platformName);
  return {
    tags: [
      {
        name: 'iam',
        description:
          'Users, their login history and role templates, in the original’s shapes; never a secret.',
      },
    ],
    schemas: {
      User: {
        type: 'object',
        description:
          'A User object without `spec.password`, the login admission annotation, the last-applied annotation or lockout bookkeeping; `metadata.annotations["iam.<platform>.io/globalrole"]` names its global role when it has one.',
        required: ['apiVersion', 'kind', 'metadata', 'spec'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { const: 'User' },
          metadata: { type: 'object', required: ['name'] },
          spec: { type: 'object', not: { required: ['password'] } },
          status: {
            type: 'object',
            additionalProperties: false,
            properties: {
              state: { type: 'string' },
              reason: { type: 'string' },
              lastTransitionTime: { type: 'string' },
              lastLoginTime: { type: 'string' },
            },
          },
        },
      },
      UserList: listEnvelope('User'),
    },
    paths: {
      [`${prefix}/users`]: {
        get: {
          operationId: 'listUsers',
          tags: ['iam'],
          summary: 'Users: Kubernetes RBAC `list` on `users` of the IAM group',
          security: BEARER,
          parameters: listParameters,
          responses: {
            '200': jsonResponse('A page of users.', schemaRef('UserList'), noStore),
            '400': statusResponse(
              'A known parameter is malformed or repeated, or a member filter (`workspace`, `namespace`, `cluster`, …) that is not served; the message names it.',
            ),
            '401': statusResponse('No or invalid bearer token.'),
            '403': statusResponse('No RBAC `list` on `users`.'),
            '503': statusResponse('The role caches are starting, or authorization cannot be checked.'),
            default: DEFAULT_STATUS_RESPONSE,
          },
        },
      },
      [`${prefix}/users/{user}`]: {
        get: {
          operationId: 'getUser',
          tags: ['iam'],
          summary: 'One user: oneself, or Kubernetes RBAC `get` on that user',
          security: BEARER,
          parameters: [{ name: 'user', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': jsonResponse('The user.', schemaRef('User'), noStore),
            '401': statusResponse('No or invalid bearer token.'),
            '403': statusResponse('Another user without RBAC `get` on `users`.'),
            '404': statusResponse('No such user.'),
            '503': statusResponse('The role caches are starting, or authorization cannot be checked.'),
            default: DEFAULT_STATUS_RESPONSE,
          },
        },
      },
    },
  };
}
