import type { Identity } from '../kernel/identity.ts';
import { ListQueryParser, type ListQuery, type RawQuery } from '../list-query/list-query.ts';
import { matchesMetadata, sortAndPage, type Page } from '../list-query/metadata-page.ts';
import { ObjectJson, pageBody, PageMemo } from '../list-query/page-body.ts';
import type { RoleCache } from './role-cache.ts';
import type { RoleObject, RoleVocabulary } from './role-objects.ts';
import { aggregatedNames } from './role-templates.ts';
import { notFound, type Place, type ScopeAccess } from './scope-access.ts';

/** The `aggregateTo` filter: the roles a role aggregates (its role templates). */
const FILTERS = { aggregateTo: undefined };

/** Bound on the page bodies kept for repeated queries of unchanged roles. */
const PAGE_MEMO_BYTES = 2 * 1024 * 1024;

/** Where a list's roles are, as part of a remembered page's key. */
function placeKey(place: Place): string {
  switch (place.scope) {
    case 'global':
    case 'cluster':
      return place.scope;
    case 'workspace':
      return `workspace/${place.workspace}`;
    case 'namespace':
      return `namespace/${place.namespace}`;
  }
}

/** The kind of each scope's roles, as a 404 names it. */
function resourceOf(place: Place, iamGroup: string): { group: string; resource: string } {
  switch (place.scope) {
    case 'global':
      return { group: iamGroup, resource: 'globalroles' };
    case 'cluster':
      return { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' };
    case 'workspace':
      return { group: iamGroup, resource: 'workspaceroles' };
    case 'namespace':
      return { group: 'rbac.authorization.k8s.io', resource: 'roles' };
  }
}

/**
 * The roles of a scope, as the original's role lists select them (`pkg/models/resources/v1alpha3/*role`):
 * with `aggregateTo=<role>`, the roles that role aggregates (none when it does not exist); the
 * WorkspaceRoles of a workspace are those labelled with it, except when the query asks for role
 * templates (a `label` or `labelSelector` requirement on `iam.<p>.io/role-template`, or `aggregateTo`):
 * templates are shared by all workspaces. Then the query's metadata filters, order and page.
 */
export function selectRoles(options: {
  place: Place;
  query: ListQuery;
  roles: readonly RoleObject[];
  lookup: (name: string) => RoleObject | undefined;
  vocabulary: RoleVocabulary;
}): Page<RoleObject> {
  const { place, query, lookup, vocabulary: words } = options;
  const aggregateTo = query.filters.get('aggregateTo');
  let roles: readonly RoleObject[] = options.roles;
  if (aggregateTo !== undefined) {
    const parent = lookup(aggregateTo);
    const names = new Set(parent ? aggregatedNames(parent, words.aggregationRoles) : []);
    roles = [...names].flatMap((name) => lookup(name) ?? []);
  }
  const asksForTemplates =
    aggregateTo !== undefined ||
    [...query.label.requirements, ...query.labelSelector.requirements].some(
      (r) => r.key === words.templateLabel,
    );
  const workspace = place.scope === 'workspace' && !asksForTemplates ? place.workspace : undefined;
  const selected = roles.filter(
    (role) =>
      (workspace === undefined || role.metadata.labels?.[words.workspaceLabel] === workspace) &&
      matchesMetadata(role, query, words.alias),
  );
  return sortAndPage(selected, query);
}

/**
 * The role lists and one role of each scope: GlobalRoles, Kubernetes ClusterRoles, the WorkspaceRoles
 * of a workspace and the Roles of a namespace, from the watch-backed caches, served as stored (without
 * `managedFields`, with `apiVersion` and `kind`). Where the original's GlobalRole or WorkspaceRole
 * resources are not installed their lists are empty and one of them is a 404.
 */
export class RoleLists {
  readonly #cache: RoleCache;
  readonly #access: ScopeAccess;
  readonly #words: RoleVocabulary;
  readonly #iamGroup: string;
  readonly #queries = new ListQueryParser({ filters: FILTERS });
  readonly #json = new ObjectJson<RoleObject>();
  readonly #pages = new PageMemo({ maxBytes: PAGE_MEMO_BYTES });

  constructor(deps: { cache: RoleCache; access: ScopeAccess; vocabulary: RoleVocabulary; iamGroup: string }) {
    this.#cache = deps.cache;
    this.#access = deps.access;
    this.#words = deps.vocabulary;
    this.#iamGroup = deps.iamGroup;
  }

  /**
   * A page of roles, as the JSON body to send: each role's JSON made once while it is unchanged, and a
   * page asked again of unchanged caches is the body built before (every caller allowed to list a
   * scope's roles gets the same page for a query).
   */
  async list(caller: Identity, place: Place, url: string, raw: () => RawQuery): Promise<Buffer> {
    await this.#access.authorize(caller, place, 'roles');
    const query = this.#queries.parse(url, raw);
    return this.#pages.answer(this.#cache.stateTag, `${placeKey(place)}\u0000${query.canonical}`, () => {
      const namespace = place.scope === 'namespace' ? place.namespace : '';
      const page = selectRoles({
        place,
        query,
        roles: this.#cache.roles(place.scope, namespace),
        lookup: (name) => this.#cache.role(place.scope, name, namespace),
        vocabulary: this.#words,
      });
      return pageBody(
        page.items.map((role) => this.#json.text(role, '', () => role)),
        page.totalItems,
      );
    });
  }

  async get(caller: Identity, place: Place, name: string): Promise<RoleObject> {
    await this.#access.authorize(caller, place, 'roles', name);
    const role = this.#cache.role(place.scope, name, place.scope === 'namespace' ? place.namespace : '');
    // A WorkspaceRole of another workspace (or a shared template) is not one of this workspace's roles.
    const elsewhere =
      place.scope === 'workspace' && role?.metadata.labels?.[this.#words.workspaceLabel] !== place.workspace;
    if (!role || elsewhere) {
      const { group, resource } = resourceOf(place, this.#iamGroup);
      throw notFound(group, resource, name);
    }
    return role;
  }
}
