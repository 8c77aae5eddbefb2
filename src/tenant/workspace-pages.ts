import type { Identity } from '../kernel/identity.ts';
import type { ListQuery } from '../list-query/list-query.ts';
import { matchesMetadata } from '../list-query/metadata-page.ts';
import { ObjectJson, pageBody, PageMemo } from '../list-query/page-body.ts';
import { pageInOrder, SortedIndex } from '../list-query/sorted-index.ts';
import type { KubeObject } from './kube-object.ts';
import type { TenantReads } from './tenant-cache.ts';
import type { TenantNames, WorkspaceResource } from './tenant-store.ts';
import type { WorkspaceAccess } from './workspace-access.ts';

/** Bound on the page bodies kept for repeated queries of unchanged workspaces. */
const PAGE_MEMO_BYTES = 2 * 1024 * 1024;

/**
 * Pages of workspaces (WorkspaceTemplates or Workspaces) as JSON bodies, from the tenant caches: the
 * objects sorted once per state, each one's JSON made once while it is unchanged, and, for callers who
 * may list them all, a page asked again of an unchanged cache is the body built before. Others see the
 * workspaces WorkspaceAccess gives them, cut from the same sorted objects.
 */
export class WorkspacePages {
  readonly #store: TenantReads;
  readonly #access: WorkspaceAccess;
  readonly #aliasKey: string;
  readonly #sorted = new Map<WorkspaceResource, SortedIndex<KubeObject>>();
  readonly #json = new ObjectJson<KubeObject>();
  readonly #pages = new PageMemo({ maxBytes: PAGE_MEMO_BYTES });

  constructor(deps: { store: TenantReads; access: WorkspaceAccess; names: TenantNames }) {
    this.#store = deps.store;
    this.#access = deps.access;
    this.#aliasKey = deps.names.aliasAnnotation;
  }

  async page(identity: Identity, resource: WorkspaceResource, query: ListQuery): Promise<Buffer> {
    if (!(await this.#access.mayListAll(identity, resource))) {
      const visible = new Set(await this.#access.visibleWorkspaces(identity, resource));
      return this.#build(resource, this.#store.workspacesStateTag(resource), query, (ws) => visible.has(ws));
    }
    const stateTag = this.#store.workspacesStateTag(resource);
    return this.#pages.answer(stateTag, `${resource}\u0000${query.canonical}`, () =>
      this.#build(resource, stateTag, query, () => true),
    );
  }

  #build(
    resource: WorkspaceResource,
    stateTag: string,
    query: ListQuery,
    visible: (ws: KubeObject) => boolean,
  ): Buffer {
    let index = this.#sorted.get(resource);
    if (!index) this.#sorted.set(resource, (index = new SortedIndex()));
    const sorted = index.descending(stateTag, query.sortBy, () => this.#store.listWorkspaces(resource));
    const page = pageInOrder(
      sorted,
      query,
      (ws) => visible(ws) && matchesMetadata(ws, query, this.#aliasKey),
    );
    const items = page.items.map((ws) => this.#json.text(ws, '', () => ws));
    return pageBody(items, page.totalItems);
  }
}
