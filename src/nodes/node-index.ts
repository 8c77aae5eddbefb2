import type { ListQuery } from '../list-query/list-query.ts';
import type { NodeStatus } from './node-status.ts';
import type { NodeEntry } from './node-view.ts';

export interface Selection {
  items: NodeEntry[];
  /** Matches after filtering, before paging. */
  totalItems: number;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const byName = (a: NodeEntry, b: NodeEntry) => compareNames(a.name, b.name);
// Ties broken by name, so pages stay stable however many nodes share a creation second.
const byCreation = (a: NodeEntry, b: NodeEntry) =>
  a.creationMs - b.creationMs || compareNames(a.name, b.name);
const byUpdate = (a: NodeEntry, b: NodeEntry) => a.updatedMs - b.updatedMs || compareNames(a.name, b.name);

export interface NodeIndexOptions {
  /** The annotation `?alias=` searches: `<platformName>.io/alias-name`. */
  aliasAnnotation?: string;
}

/** Position of `entry` in `sorted`, or where it would be inserted. */
function search(sorted: NodeEntry[], entry: NodeEntry, compare: (a: NodeEntry, b: NodeEntry) => number) {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compare(sorted[mid]!, entry) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * The node list's in-memory index: every node's entry, kept in each sort order as events arrive
 * (ascending; descending reads them backwards, which is also how the system we re-create orders
 * ties), so a page needs no sorting. `generation` changes with every change of content.
 */
export class NodeIndex {
  readonly #entries = new Map<string, NodeEntry>();
  readonly #byName: NodeEntry[] = [];
  readonly #byCreation: NodeEntry[] = [];
  readonly #byUpdate: NodeEntry[] = [];
  readonly #aliasAnnotation: string;
  #generation = 0;

  constructor(options: NodeIndexOptions = {}) {
    this.#aliasAnnotation = options.aliasAnnotation ?? 'platform.io/alias-name';
  }

  get size(): number {
    return this.#entries.size;
  }

  get generation(): number {
    return this.#generation;
  }

  get(name: string): NodeEntry | undefined {
    return this.#entries.get(name);
  }

  upsert(entry: NodeEntry): void {
    const old = this.#entries.get(entry.name);
    if (old === entry) return;
    // The same node at the same resourceVersion with the same allocation (a relist, a repeated event).
    if (
      old &&
      old.resourceVersion === entry.resourceVersion &&
      old.resourceVersion !== '' &&
      old.etag === entry.etag
    )
      return;
    this.#entries.set(entry.name, entry);
    this.#generation++;
    if (old && old.creationMs === entry.creationMs && old.updatedMs === entry.updatedMs) {
      // Sort keys unchanged (the usual status or allocation update): swap in place.
      this.#byName[search(this.#byName, old, byName)] = entry;
      this.#byCreation[search(this.#byCreation, old, byCreation)] = entry;
      this.#byUpdate[search(this.#byUpdate, old, byUpdate)] = entry;
      return;
    }
    if (old) this.#removeSorted(old);
    this.#byName.splice(search(this.#byName, entry, byName), 0, entry);
    this.#byCreation.splice(search(this.#byCreation, entry, byCreation), 0, entry);
    this.#byUpdate.splice(search(this.#byUpdate, entry, byUpdate), 0, entry);
  }

  delete(name: string): void {
    const old = this.#entries.get(name);
    if (!old) return;
    this.#entries.delete(name);
    this.#removeSorted(old);
    this.#generation++;
  }

  #removeSorted(entry: NodeEntry): void {
    this.#byName.splice(search(this.#byName, entry, byName), 1);
    this.#byCreation.splice(search(this.#byCreation, entry, byCreation), 1);
    this.#byUpdate.splice(search(this.#byUpdate, entry, byUpdate), 1);
  }

  /** Filters, orders and pages. Unfiltered pages are sliced straight out of the sorted arrays. */
  select(query: ListQuery<NodeStatus>): Selection {
    const sorted =
      query.sortBy === 'name'
        ? this.#byName
        : query.sortBy === 'lastUpdateTimestamp'
          ? this.#byUpdate
          : this.#byCreation;
    const n = sorted.length;
    const at = query.ascending ? (i: number) => sorted[i]! : (i: number) => sorted[n - 1 - i]!;
    const offset = query.limit === undefined ? 0 : (query.page - 1) * query.limit;
    const end = query.limit === undefined ? Infinity : offset + query.limit;

    const { name, labelSelector, status, names, uid, label, annotation, alias } = query;
    const unfiltered =
      name === undefined &&
      labelSelector.empty &&
      status === undefined &&
      names === undefined &&
      uid === undefined &&
      label.empty &&
      annotation.empty &&
      alias === undefined;
    if (unfiltered) {
      const items: NodeEntry[] = [];
      for (let i = offset; i < Math.min(end, n); i++) items.push(at(i));
      return { items, totalItems: n };
    }

    const items: NodeEntry[] = [];
    let matched = 0;
    for (let i = 0; i < n; i++) {
      const entry = at(i);
      if (status !== undefined && entry.status !== status) continue;
      if (name !== undefined && !entry.name.includes(name)) continue;
      if (names !== undefined && !names.has(entry.name)) continue;
      if (uid !== undefined && entry.uid !== uid) continue;
      if (!labelSelector.matches(entry.labels) || !label.matches(entry.labels)) continue;
      if (!annotation.matches(entry.annotations)) continue;
      if (alias !== undefined && !(entry.annotations?.[this.#aliasAnnotation] ?? '').includes(alias))
        continue;
      if (matched >= offset && matched < end) items.push(entry);
      matched++;
    }
    return { items, totalItems: matched };
  }
}
