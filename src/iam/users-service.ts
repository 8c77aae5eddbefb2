import type { AccessReviewer } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { parseListQuery, type ListQuery, type RawQuery } from '../list-query/list-query.ts';
import type { UserObject } from '../tokens/iam-resources.ts';
import type { UserDirectory } from '../tokens/user-directory.ts';
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
    const query = parseListQuery(raw);
    const email = single(raw, 'email');
    const globalRole = single(raw, 'globalrole');

    let users = this.#users.list().filter((u) => this.#matches(u, query, email));
    // The global role is the one filter that needs the roles; asked only of what the other filters kept.
    const rolesOf = new Map<UserObject, string | undefined>();
    if (globalRole !== undefined) {
      await Promise.all(users.map(async (u) => rolesOf.set(u, await this.#roles.globalRoleOf(u))));
      users = users.filter((u) => rolesOf.get(u) === globalRole);
    }
    // Each creation time parsed once, not per comparison: the sort is most of a page's cost.
    const keyed = users.map((u) => ({ user: u, created: createdAt(u) }));
    const sign = query.ascending ? 1 : -1;
    const sorted = keyed.sort((a, b) => sign * order(a, b, query)).map((k) => k.user);
    const page =
      query.limit === undefined
        ? sorted
        : sorted.slice((query.page - 1) * query.limit, query.page * query.limit);
    const items = await Promise.all(
      page.map(async (u) =>
        this.#view(u, rolesOf.has(u) ? rolesOf.get(u) : await this.#roles.globalRoleOf(u)),
      ),
    );
    return { items, totalItems: users.length };
  }

  #view(user: UserObject, globalRole: string | undefined): UserObject {
    return publicUser(user, {
      ledgerAnnotation: this.#ledgerAnnotation,
      globalRoleAnnotation: this.#words.globalRole,
      globalRole,
    });
  }

  #matches(user: UserObject, query: ListQuery, email: string | undefined): boolean {
    const { metadata } = user;
    if (query.name !== undefined && !metadata.name.includes(query.name)) return false;
    if (query.names !== undefined && !query.names.has(metadata.name)) return false;
    if (query.uid !== undefined && metadata.uid !== query.uid) return false;
    if (!query.labelSelector.matches(metadata.labels) || !query.label.matches(metadata.labels)) return false;
    if (!query.annotation.matches(metadata.annotations)) return false;
    if (
      query.alias !== undefined &&
      !(metadata.annotations?.[this.#aliasAnnotation] ?? '').includes(query.alias)
    )
      return false;
    return email === undefined || user.spec?.email === email;
  }
}

/** Ascending order by the query's key: name, or creation time with ties by name (the original has no update time for users). */
function order(
  a: { user: UserObject; created: number },
  b: { user: UserObject; created: number },
  query: ListQuery,
): number {
  const byName = compare(a.user.metadata.name, b.user.metadata.name);
  if (query.sortBy === 'name') return byName;
  return a.created - b.created || byName;
}

function createdAt(user: UserObject): number {
  return Date.parse(String(user.metadata.creationTimestamp ?? '')) || 0;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function single(raw: RawQuery, parameter: string): string | undefined {
  const value = raw[parameter];
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string') return value;
  throw new ApiError('BadRequest', `query parameter "${parameter}" must be given at most once`, {
    details: { causes: [{ reason: 'FieldValueDuplicate', message: 'repeated', field: parameter }] },
  });
}
