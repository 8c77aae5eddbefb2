import type { ListQuery } from './list-query.ts';

/** What the v1alpha3 pipeline reads of an object: its metadata. */
export interface ListedObject {
  metadata: {
    name: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string | Date;
  };
}

/** The v1alpha3 list envelope. */
export interface Page<T> {
  items: T[];
  totalItems: number;
}

/**
 * Whether an object passes the query's metadata filters, as the original's default list filter reads
 * them: `name` (substring), `names`, `uid`, `labelSelector` and `label`, `annotation`, and `alias` (a
 * substring of the `aliasKey` annotation).
 */
export function matchesMetadata(object: ListedObject, query: ListQuery, aliasKey: string): boolean {
  const { name, uid, labels, annotations } = object.metadata;
  if (query.name !== undefined && !name.includes(query.name)) return false;
  if (query.names !== undefined && !query.names.has(name)) return false;
  if (query.uid !== undefined && uid !== query.uid) return false;
  if (!query.labelSelector.matches(labels) || !query.label.matches(labels)) return false;
  if (!query.annotation.matches(annotations)) return false;
  return query.alias === undefined || (annotations?.[aliasKey] ?? '').includes(query.alias);
}

/**
 * Sorts and pages objects that already passed the filters: by creation time with ties by name (the
 * default; update time has no field of its own in metadata, so it sorts the same), or by name;
 * descending unless `ascending`. `totalItems` counts every object given.
 */
export function sortAndPage<T extends ListedObject>(objects: readonly T[], query: ListQuery): Page<T> {
  // Each creation time parsed once, not per comparison: the sort is most of a page's cost.
  const keyed = objects.map((object) => ({ object, created: createdAt(object) }));
  const sign = query.ascending ? 1 : -1;
  const order = (a: Keyed<T>, b: Keyed<T>): number => {
    const byName = compare(a.object.metadata.name, b.object.metadata.name);
    return sign * (query.sortBy === 'name' ? byName : a.created - b.created || byName);
  };
  if (query.limit === undefined) {
    return { items: keyed.sort(order).map((k) => k.object), totalItems: objects.length };
  }
  const start = (query.page - 1) * query.limit;
  const leading = firstInOrder(keyed, start + query.limit, order);
  return { items: leading.slice(start).map((k) => k.object), totalItems: objects.length };
}

interface Keyed<T> {
  object: T;
  created: number;
}

/**
 * The first `count` items in `order`, sorted. A console page needs the first 10 of thousands: keeping
 * only those (each item compared with the last kept, most of them dropped at once) costs a pass over
 * the list instead of sorting it all on every request. A large `count` sorts the whole list.
 */
function firstInOrder<K>(items: K[], count: number, order: (a: K, b: K) => number): K[] {
  if (count * 8 >= items.length) return items.sort(order).slice(0, count);
  const kept: K[] = [];
  for (const item of items) {
    if (kept.length === count && order(item, kept[count - 1]!) >= 0) continue;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (order(kept[middle]!, item) <= 0) low = middle + 1;
      else high = middle;
    }
    kept.splice(low, 0, item);
    if (kept.length > count) kept.pop();
  }
  return kept;
}

/** An object's creation time in milliseconds (0 when unset), for ordering by `createTime`. */
export function createdAt(object: ListedObject): number {
  const value = object.metadata.creationTimestamp;
  if (value instanceof Date) return value.getTime();
  return Date.parse(value ?? '') || 0;
}

/** Code-unit order of names: the same on every replica, whatever its locale. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
