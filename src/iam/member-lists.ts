import type { Identity } from '../kernel/identity.ts';
import { parseListQuery, type RawQuery } from '../list-query/list-query.ts';
import { matchesMetadata, sortAndPage, type Page } from '../list-query/metadata-page.ts';
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
  }

  async list(caller: Identity, place: MemberPlace, raw: RawQuery): Promise<Page<UserObject>> {
    await this.#access.authorize(caller, place, 'members');
    const roleParameter = ROLE_PARAMETER[place.scope];
    const query = parseListQuery(raw, {
      filters: { email: undefined, ingroup: undefined, notingroup: undefined, [roleParameter]: undefined },
    });
    const email = query.filters.get('email');
    const inGroup = query.filters.get('ingroup');
    const notInGroup = query.filters.get('notingroup');
    const users = new Map(this.#users.list().map((u) => [u.metadata.name, u]));
    const members: { user: UserObject; role: string }[] = [];
    for (const { username, role } of this.#memberships(place, query.filters.get(roleParameter))) {
      const user = users.get(username);
      if (
        user &&
        matchesMetadata(user, query, this.#words.alias) &&
        (email === undefined || user.spec?.email === email) &&
        (inGroup === undefined || (user.spec?.groups ?? []).includes(inGroup)) &&
        (notInGroup === undefined || !(user.spec?.groups ?? []).includes(notInGroup))
      )
        members.push({ user, role });
    }
    const roleOf = new Map(members.map((m) => [m.user, m.role]));
    const page = sortAndPage(
      members.map((m) => m.user),
      query,
    );
    return {
      items: page.items.map((u) => this.#view(place, u, roleOf.get(u) ?? '')),
      totalItems: page.totalItems,
    };
  }

  async get(caller: Identity, place: MemberPlace, username: string): Promise<UserObject> {
    await this.#access.authorize(caller, place, 'members');
    const membership = this.#memberships(place).find((m) => m.username === username);
    const user = membership ? await this.#users.get(username) : undefined;
    if (!membership || !user) throw userNotFound(this.#users.iam.group, username);
    return this.#view(place, user, membership.role);
  }

  #memberships(place: MemberPlace, role?: string): Membership[] {
    const where =
      place.scope === 'workspace' ? place.workspace : place.scope === 'namespace' ? place.namespace : '';
    return membershipsOf(this.#cache.bindings(place.scope, where), role);
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
