import type { AccessReviewer, ResourceAttributes } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { ListQueryParser, type ListQuery, type RawQuery } from '../list-query/list-query.ts';
import { matchesMetadata } from '../list-query/metadata-page.ts';
import { ObjectJson, pageBody, PageMemo } from '../list-query/page-body.ts';
import { pageInOrder, SortedIndex } from '../list-query/sorted-index.ts';
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

/** Bound on the page bodies kept for repeated queries of unchanged users (a console page is a few kB). */
const PAGE_MEMO_BYTES = 1024 * 1024;

/** The list's parameters, unless one of them is a member filter that is not served (400). */
function refusingMemberFilters(raw: RawQuery): RawQuery {
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
  return raw;
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
  /** The question every list asks; frozen, so the reviewer keeps its cache key (access-review.ts). */
  readonly #listUsers: ResourceAttributes;
  readonly #queries = new ListQueryParser({ filters: { email: undefined, globalrole: undefined } });
  readonly #sorted = new SortedIndex<UserObject>();
  readonly #json = new ObjectJson<UserObject>();
  readonly #pages = new PageMemo({ maxBytes: PAGE_MEMO_BYTES });

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
    this.#listUsers = Object.freeze({ verb: 'list', group: deps.users.iam.group, resource: 'users' });
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

  /**
   * A page of users, as the JSON body to send. Built from users sorted once per state and each user's
   * JSON made once per version and role (page-body.ts); a page asked again of unchanged users and roles
   * is the body built before. Every caller allowed to list users gets the same page for a query.
   */
  async list(caller: Identity, url: string, raw: () => RawQuery): Promise<Buffer> {
    await this.#reviewer.authorize(caller, this.#listUsers);
    const query = this.#queries.parse(url, () => refusingMemberFilters(raw()));
    const stateTag = `${this.#users.stateTag()}/${this.#roles.stateTag}`;
    return this.#pages.answer(stateTag, query.canonical, () => this.#page(query, stateTag));
  }

  async #page(query: ListQuery, stateTag: string): Promise<Buffer> {
    const email = query.filters.get('email');
    const globalRole = query.filters.get('globalrole');
    const sorted = this.#sorted.descending(stateTag, query.sortBy, () => this.#users.list());
    const matching = (u: UserObject) =>
      matchesMetadata(u, query, this.#aliasAnnotation) && (email === undefined || u.spec?.email === email);
    // The global role is the one filter that needs the roles; asked only of what the other filters kept.
    const rolesOf = new Map<UserObject, string | undefined>();
    if (globalRole !== undefined) {
      const candidates = sorted.filter(matching);
      await Promise.all(candidates.map(async (u) => rolesOf.set(u, await this.#roles.globalRoleOf(u))));
    }
    const page = pageInOrder(sorted, query, (u) =>
      globalRole === undefined ? matching(u) : rolesOf.get(u) === globalRole,
    );
    const items = await Promise.all(
      page.items.map(async (u) => {
        const role = rolesOf.has(u) ? rolesOf.get(u) : await this.#roles.globalRoleOf(u);
        return this.#json.text(u, role ?? '', () => this.#view(u, role));
      }),
    );
    return pageBody(items, page.totalItems);
  }

  #view(user: UserObject, globalRole: string | undefined): UserObject {
    return publicUser(user, {
      ledgerAnnotation: this.#ledgerAnnotation,
      globalRoleAnnotation: this.#words.globalRole,
      globalRole,
    });
  }
}
