import type { AccessReviewer } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { parseListQuery, type RawQuery } from '../list-query/list-query.ts';
import { matchesMetadata, sortAndPage } from '../list-query/metadata-page.ts';
import type { UserObject } from '../users/iam-resources.ts';
import type { UserDirectory } from '../users/user-directory.ts';
import { notFound, type MemberRoles } from './member-roles.ts';
import type { RoleVocabulary } from './role-objects.ts';
import { publicUser } from './user-view.ts';

/**
 * The original's member filters of the user list (`workspace`, `namespace`, `cluster`, with their
 * role) are not served: answering them with every user would be wrong, so they are refused.
 */
const UNSUPPORTED_FILTERS = [
  'workspace',
  'workspacerole',
  'namespace',
  'role',
  'cluster',
  'clusterrole',
  'ingroup',
  'notingroup',
];

export interface UserList {
  items: UserObject[];
  totalItems: number;
}

/**
 * `users.iam.<platform>.io` as the original's users API serves them, from the token service's cache:
 * never a password hash or login bookkeeping (user-view.ts), with the global role annotation. Callers
 * read themselves; anyone else needs Kubernetes RBAC `get` (one user) or `list` (the list) on users.
 */
export class UsersService {
  readonly #users: UserDirectory;
  readonly #roles: MemberRoles;
  readonly #reviewer: AccessReviewer;
  readonly #words: RoleVocabulary;
  readonly #aliasAnnotation: string;
  readonly #ledgerAnnotation: string;

  constructor(deps: {
    users: UserDirectory;
    roles: MemberRoles;
    reviewer: AccessReviewer;
    vocabulary: RoleVocabulary;
    platformName: string;
  }) {
    this.#users = deps.users;
    this.#roles = deps.roles;
    this.#reviewer = deps.reviewer;
    this.#words = deps.vocabulary;
    this.#aliasAnnotation = `${deps.platformName}.io/alias-name`;
    this.#ledgerAnnotation = `${deps.users.iam.group}/login-attempts`;
  }

  async get(caller: Identity, name: string): Promise<UserObject> {
    if (caller.username !== name) {
      await this.#reviewer.authorize(caller, {
        verb: 'get',
        group: this.#users.iam.group,
        resource: 'users',
        name,
      });
    }
    const user = await this.#users.get(name);
    if (!user) throw notFound(this.#users.iam.group, name);
    return this.#view(user, await this.#roles.globalRoleOf(user));
  }

  async list(caller: Identity, raw: RawQuery): Promise<UserList> {
    await this.#reviewer.authorize(caller, { verb: 'list', group: this.#users.iam.group, resource: 'users' });
    for (const parameter of UNSUPPORTED_FILTERS) {
      if (raw[parameter] !== undefined) {
        throw new ApiError(
          'BadRequest',
          `query parameter "${parameter}" (listing the members of a scope) is not supported here`,
          {
            details: {
              causes: [{ reason: 'FieldValueNotSupported', message: 'not supported', field: parameter }],
            },
          },
        );
      }
    }
    const query = parseListQuery(raw, { filters: { email: undefined, globalrole: undefined } });
    const email = query.filters.get('email');
    const globalRole = query.filters.get('globalrole');

    let users = this.#users
      .list()
      .filter(
        (u) =>
          matchesMetadata(u, query, this.#aliasAnnotation) &&
          (email === undefined || u.spec?.email === email),
      );
    // The global role is the one filter that needs the roles; asked only of what the other filters kept.
    const rolesOf = new Map<UserObject, string | undefined>();
    if (globalRole !== undefined) {
      await Promise.all(users.map(async (u) => rolesOf.set(u, await this.#roles.globalRoleOf(u))));
      users = users.filter((u) => rolesOf.get(u) === globalRole);
    }
    const page = sortAndPage(users, query);
    const items = await Promise.all(
      page.items.map(async (u) =>
        this.#view(u, rolesOf.has(u) ? rolesOf.get(u) : await this.#roles.globalRoleOf(u)),
      ),
    );
    return { items, totalItems: page.totalItems };
  }

  #view(user: UserObject, globalRole: string | undefined): UserObject {
    return publicUser(user, {
      ledgerAnnotation: this.#ledgerAnnotation,
      globalRoleAnnotation: this.#words.globalRole,
      globalRole,
    });
  }
}
