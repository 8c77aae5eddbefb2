import type { ListQuery } from './list-query.ts';
import { compare, createdAt, type ListedObject, type Page } from './metadata-page.ts';

/**
 * A cache's objects sorted once per state, for each order a list may ask: by creation time with ties
 * by name (every sort key but `name`: update time has no field of its own in metadata), or by name.
 * Both are kept descending, the default; an ascending page walks the same array from its end, since
 * names are unique and the order is total. A changed state sorts again, on first use.
 */
export class SortedIndex<T extends ListedObject> {
  #stateTag: string | undefined;
  #byCreation: readonly T[] | undefined;
  #byName: readonly T[] | undefined;

  /** The objects of `stateTag` in descending order of `sortBy`; `objects()` is read only when the state changed. */
  descending(stateTag: string, sortBy: ListQuery['sortBy'], objects: () => readonly T[]): readonly T[] {
    if (stateTag !== this.#stateTag) {
      this.#stateTag = stateTag;
      this.#byCreation = undefined;
      this.#byName = undefined;
    }
    if (sortBy === 'name') return (this.#byName ??= sortedByName(objects()));
    return (this.#byCreation ??= sortedByCreation(objects()));
  }
}

/**
 * The page of `query` from objects already in descending order, keeping those `keep` accepts;
 * `totalItems` counts every kept object. The same answer as `sortAndPage` of the kept objects.
 */
export function pageInOrder<T>(
  descending: readonly T[],
  query: ListQuery,
  keep: (object: T) => boolean,
): Page<T> {
  const start = query.limit === undefined ? 0 : (query.page - 1) * query.limit;
  const end = query.limit === undefined ? Infinity : start + query.limit;
  const items: T[] = [];
  let totalItems = 0;
  const count = descending.length;
  for (let i = 0; i < count; i++) {
    const object = descending[query.ascending ? count - 1 - i : i]!;
    if (!keep(object)) continue;
    if (totalItems >= start && totalItems < end) items.push(object);
    totalItems++;
  }
  return { items, totalItems };
}

function sortedByName<T extends ListedObject>(objects: readonly T[]): T[] {
  return [...objects].sort((a, b) => compare(b.metadata.name, a.metadata.name));
}

function sortedByCreation<T extends ListedObject>(objects: readonly T[]): T[] {
  // Each creation time parsed once, not per comparison.
  const keyed = objects.map((object) => ({ object, created: createdAt(object) }));
  keyed.sort((a, b) => b.created - a.created || compare(b.object.metadata.name, a.object.metadata.name));
  return keyed.map((k) => k.object);
}
