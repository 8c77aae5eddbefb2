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

const userParameter: Parameter = { name: 'user', in: 'path', required: true, schema: { type: 'string' } };
const userBody = (schema: string) => ({
  required: true,
  content: { 'application/json': { schema: schemaRef(schema) } },
});
const success = jsonResponse('Done, as the original answers.', {
  type: 'object',
  required: ['message'],
  properties: { message: { const: 'success' } },
});
/** The errors every user write may answer. */
const writeErrors = (forbidden: string) => ({
  '400': statusResponse(
    'Not a valid body: malformed JSON, another kind or apiVersion, a name that is not a DNS-1123 subdomain of at most 63 characters, an invalid e-mail address, a password outside the policy; the message names the field.',
  ),
  '401': statusResponse('No or invalid bearer token.'),
  '403': statusResponse(forbidden),
  '413': statusResponse('The body is larger than 64 KiB.'),
  '415': statusResponse('Another media type than `application/json`.'),
  '503': statusResponse('The role caches are starting, or authorization cannot be checked.'),
  default: DEFAULT_STATUS_RESPONSE,
});

/** The users API: one user, the user list in the v1alpha3 envelope, and the user writes. */
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
      UserCreate: {
        type: 'object',
        description:
          'A User to create: `metadata.name` (a DNS-1123 subdomain of at most 63 characters), `spec.email` and `spec.password` required (8 to 64 characters, at most 72 bytes, with a lower-case letter, an upper-case letter and a digit; hashed with bcrypt before anything is stored). `metadata.annotations["iam.<platform>.io/globalrole"]` binds that platform role. No `spec.groups`.',
        required: ['metadata', 'spec'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { const: 'User' },
          metadata: { type: 'object', required: ['name'] },
          spec: {
            type: 'object',
            required: ['email', 'password'],
            properties: {
              email: { type: 'string', maxLength: 254 },
              password: { type: 'string', minLength: 8, maxLength: 64, writeOnly: true },
              lang: { type: 'string', maxLength: 32 },
              description: { type: 'string', maxLength: 1024 },
              displayName: { type: 'string', maxLength: 256 },
            },
          },
        },
      },
      UserUpdate: {
        type: 'object',
        description:
          'The whole User as read, changed: email, lang, description, display name, labels and annotations (`iam.<platform>.io/globalrole` changes the platform role). `spec.password` is ignored and `spec.groups` cannot change; `metadata.resourceVersion`, when sent, must be current.',
        required: ['metadata', 'spec'],
        properties: {
          apiVersion: { type: 'string' },
          kind: { const: 'User' },
          metadata: { type: 'object', required: ['name'] },
          spec: { type: 'object', required: ['email'] },
        },
      },
      PasswordReset: {
        type: 'object',
        required: ['password'],
        properties: {
          currentPassword: { type: 'string', writeOnly: true },
          password: { type: 'string', minLength: 8, maxLength: 64, writeOnly: true },
        },
      },
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
        post: {
          operationId: 'createUser',
          tags: ['iam'],
          summary: 'Create a user: Kubernetes RBAC `create` on `users` of the IAM group',
          description:
            'Binding a platform role also needs RBAC `create` on `globalrolebindings`; where the original’s GlobalRoles are not installed, a role annotation is refused (400).',
          security: BEARER,
          requestBody: userBody('UserCreate'),
          responses: {
            '200': jsonResponse('The user as stored, without its password.', schemaRef('User'), noStore),
            ...writeErrors('No RBAC `create` on `users` (or on `globalrolebindings`, to bind a role).'),
            '404': statusResponse('The platform role named does not exist.'),
            '409': statusResponse('A user of that name exists.'),
          },
        },
      },
      [`${prefix}/users/{user}/password`]: {
        put: {
          operationId: 'modifyPassword',
          tags: ['iam'],
          summary:
            'Change a password: one’s own with `currentPassword`, anyone’s with RBAC `update` on `users/password` or `users`',
          description:
            'Every other session of the user ends (the caller’s own session stays when it is theirs).',
          security: BEARER,
          parameters: [userParameter],
          requestBody: userBody('PasswordReset'),
          responses: {
            '200': success,
            ...writeErrors('Another user’s password without RBAC `update` on `users/password` or `users`.'),
            '404': statusResponse('No such user.'),
          },
        },
      },
      [`${prefix}/users/{user}`]: {
        get: {
          operationId: 'getUser',
          tags: ['iam'],
          summary: 'One user: oneself, or Kubernetes RBAC `get` on that user',
          security: BEARER,
          parameters: [userParameter],
          responses: {
            '200': jsonResponse('The user.', schemaRef('User'), noStore),
            '401': statusResponse('No or invalid bearer token.'),
            '403': statusResponse('Another user without RBAC `get` on `users`.'),
            '404': statusResponse('No such user.'),
            '503': statusResponse('The role caches are starting, or authorization cannot be checked.'),
            default: DEFAULT_STATUS_RESPONSE,
          },
        },
        put: {
          operationId: 'updateUser',
          tags: ['iam'],
          summary: 'Update a user: oneself, or Kubernetes RBAC `update` on that user',
          description:
            'Changing the platform role needs RBAC `update` on `users` (also for oneself) and `create` on `globalrolebindings`.',
          security: BEARER,
          parameters: [userParameter],
          requestBody: userBody('UserUpdate'),
          responses: {
            '200': jsonResponse('The user as stored, without its password.', schemaRef('User'), noStore),
            ...writeErrors('Another user (or a role change) without RBAC `update` on `users`.'),
            '404': statusResponse('No such user, or no such platform role.'),
            '409': statusResponse(
              'A stale `metadata.resourceVersion`, or the change would demote the last platform administrator.',
            ),
          },
        },
        delete: {
          operationId: 'deleteUser',
          tags: ['iam'],
          summary: 'Delete a user: Kubernetes RBAC `delete` on that user',
          description:
            'Its sessions end at once (and the proxy’s open streams with them), and every role binding labelled `iam.<platform>.io/user-ref` with its name goes.',
          security: BEARER,
          parameters: [userParameter],
          requestBody: { required: false, content: { 'application/json': { schema: { type: 'object' } } } },
          responses: {
            '200': success,
            ...writeErrors('No RBAC `delete` on `users`.'),
            '404': statusResponse('No such user.'),
            '409': statusResponse('The user is the last platform administrator.'),
          },
        },
      },
    },
  };
}
