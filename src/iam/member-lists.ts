import type { Identity } from '../kernel/identity.ts';
import { ListQueryParser, type ListQuery, type RawQuery } from '../list-query/list-query.ts';
import { matchesMetadata } from '../list-query/metadata-page.ts';
import { ObjectJson, pageBody, PageMemo } from '../list-query/page-body.ts';
import { pageInOrder, SortedIndex } from '../list-query/sorted-index.ts';
import type { UserObject } from '../users/iam-resources.ts';
import type { UserDirectory } from '../users/user-directory.ts';
import { notFound as userNotFound } from './member-roles.ts';
import { membershipsOf, type Membership } from './members.ts';
import type { RoleCache } from './role-cache.ts';
import type { RoleVocabulary } from './role-objects.ts';
import type { Place, ScopeAccess } from './scope-access.ts';
import { publicUser } from './user-view.ts';

/** A scope that has members: every scope but the platform (whose users are the users list). */
export type MemberPlace = Exclude<Place, { scope: 'global' }>;

/** The query parameter filtering a scope's members by their role there, as the original names it. */
const ROLE_PARAMETER: Record<MemberPlace['scope'], string> = {
  cluster: 'clusterrole',
  workspace: 'workspacerole',
  namespace: 'role',
};

/** Bound on the page bodies kept for repeated queries of unchanged members. */
const PAGE_MEMO_BYTES = 2 * 1024 * 1024;

/**
 * The members of the cluster, of a workspace and of a namespace, as the original serves them: each a
 * User (never a secret: user-view.ts) annotated with its role at that scope (`iam.<p>.io/clusterrole`,
 * `iam.<p>.io/workspacerole`, `iam.<p>.io/role`), found through the scope's role bindings (members.ts):
 * ClusterRoleBindings, the WorkspaceRoleBindings labelled with the workspace, the RoleBindings in the
 * namespace. A subject that is no User is skipped, as the original skips it. Lists take the users
 * list's query (metadata filters, `email`, `ingroup`, `notingroup`) and the scope's role filter.
 */
export class MemberLists {
  readonly #cache: RoleCache;
  readonly #access: ScopeAccess;
  readonly #users: UserDirectory;
  readonly #words: RoleVocabulary;
  readonly #ledgerAnnotation: string;
  readonly #queries = new Map<MemberPlace['scope'], ListQueryParser>();
  readonly #sorted = new SortedIndex<UserObject>();
  readonly #json = new ObjectJson<UserObject>();
  readonly #pages = new PageMemo({ maxBytes: PAGE_MEMO_BYTES });

  constructor(deps: {
    cache: RoleCache;
    access: ScopeAccess;
    users: UserDirectory;
    vocabulary: RoleVocabulary;
  }) {
    this.#cache = deps.cache;
    this.#access = deps.access;
    this.#users = deps.users;
    this.#words = deps.vocabulary;
    this.#ledgerAnnotation = `${deps.users.iam.group}/login-attempts`;
    for (const scope of ['cluster', 'workspace', 'namespace'] as const) {
      const filters = { email: undefined, ingroup: undefined, notingroup: undefined };
      this.#queries.set(
        scope,
        new ListQueryParser({ filters: { ...filters, [ROLE_PARAMETER[scope]]: undefined } }),
      );
    }
  }

  /**
   * A page of members, as the JSON body to send: the users sorted once per state, each member's JSON
   * made once per user version and role, and a page asked again of unchanged users and bindings is the
   * body built before (every caller allowed to list a scope's members gets the same page for a query).
   */
  async list(caller: Identity, place: MemberPlace, url: string, raw: () => RawQuery): Promise<Buffer> {
    await this.#access.authorize(caller, place, 'members');
    const query = this.#queries.get(place.scope)!.parse(url, raw);
    const usersTag = this.#users.stateTag();
    return this.#pages.answer(
      `${usersTag}/${this.#cache.stateTag}`,
      `${place.scope}/${this.#where(place)}\u0000${query.canonical}`,
      () => this.#page(place, query, usersTag),
    );
  }

  #page(place: MemberPlace, query: ListQuery, usersTag: string): Buffer {
    const email = query.filters.get('email');
    const inGroup = query.filters.get('ingroup');
    const notInGroup = query.filters.get('notingroup');
    const roleOf = new Map<string, string>();
    for (const { username, role } of this.#memberships(place, query.filters.get(ROLE_PARAMETER[place.scope])))
      roleOf.set(username, role);
    const sorted = this.#sorted.descending(usersTag, query.sortBy, () => this.#users.list());
    const page = pageInOrder(
      sorted,
      query,
      (user) =>
        roleOf.has(user.metadata.name) &&
        matchesMetadata(user, query, this.#words.alias) &&
        (email === undefined || user.spec?.email === email) &&
        (inGroup === undefined || (user.spec?.groups ?? []).includes(inGroup)) &&
        (notInGroup === undefined || !(user.spec?.groups ?? []).includes(notInGroup)),
    );
    const items = page.items.map((user) => {
      const role = roleOf.get(user.metadata.name) ?? '';
      return this.#json.text(user, `${place.scope}/${role}`, () => this.#view(place, user, role));
    });
    return pageBody(items, page.totalItems);
  }

  async get(caller: Identity, place: MemberPlace, username: string): Promise<UserObject> {
    await this.#access.authorize(caller, place, 'members');
    const membership = this.#memberships(place).find((m) => m.username === username);
    const user = membership ? await this.#users.get(username) : undefined;
    if (!membership || !user) throw userNotFound(this.#users.iam.group, username);
    return this.#view(place, user, membership.role);
  }

  #memberships(place: MemberPlace, role?: string): Membership[] {
    return membershipsOf(this.#cache.bindings(place.scope, this.#where(place)), role);
  }

  /** The workspace or namespace of a scope; the cluster's is empty. */
  #where(place: MemberPlace): string {
    return place.scope === 'workspace' ? place.workspace : place.scope === 'namespace' ? place.namespace : '';
  }

  #view(place: MemberPlace, user: UserObject, role: string): UserObject {
    const annotation =
      place.scope === 'cluster'
        ? this.#words.clusterRole
        : place.scope === 'workspace'
          ? this.#words.workspaceRole
          : this.#words.namespaceRole;
    return publicUser(user, {
      ledgerAnnotation: this.#ledgerAnnotation,
      globalRoleAnnotation: this.#words.globalRole,
      globalRole: undefined,
      scopeRole: { annotation, role },
    });
  }
}
