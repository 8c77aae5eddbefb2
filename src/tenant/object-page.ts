import type { ListQuery } from '../list-query/list-query.ts';
import type { KubeObject } from './kube-object.ts';

/** The v1alpha3 list envelope. */
export interface Page<T> {
  items: T[];
  totalItems: number;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function created(o: KubeObject): number {
  return Date.parse(o.metadata.creationTimestamp ?? '') || 0;
}

/**
 * Filters, sorts and pages objects by the v1alpha3 query, as the original's default list does for
 * object metadata: `name` (substring), `names`, `uid`, `labelSelector`/`label`, `annotation` and the
 * alias annotation; creation time (ties by name) or name order. Update time has no field of its own in
 * these objects, so it sorts by creation time.
 */
export function pageObjects<T extends KubeObject>(
  objects: readonly T[],
  query: ListQuery,
  aliasKey: string,
): Page<T> {
  const matching = objects.filter((o) => {
    const { name, uid, labels = {}, annotations = {} } = o.metadata;
    return (
      (query.name === undefined || name.includes(query.name)) &&
      (query.names === undefined || query.names.has(name)) &&
      (query.uid === undefined || uid === query.uid) &&
      query.labelSelector.matches(labels) &&
      query.label.matches(labels) &&
      query.annotation.matches(annotations) &&
      (query.alias === undefined || (annotations[aliasKey] ?? '').includes(query.alias))
    );
  });
  const sorted = [...matching].sort((a, b) => {
    const order =
      query.sortBy === 'name'
        ? compare(a.metadata.name, b.metadata.name)
        : created(a) - created(b) || compare(a.metadata.name, b.metadata.name);
    return query.ascending ? order : -order;
  });
  const items =
    query.limit === undefined
      ? sorted
      : sorted.slice((query.page - 1) * query.limit, query.page * query.limit);
  return { items, totalItems: matching.length };
}
