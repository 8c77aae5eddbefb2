import type { ListQuery } from '../list-query/list-query.ts';
import { creationMs, nameOf, type KubeObject } from './kube-object.ts';
import type { ResourceKind } from './kinds.ts';

/**
 * The list pipeline for objects of any kind: the common filters (name, names, uid, label selectors,
 * annotation selector, alias) and the kind's own, then the order and the page. Objects may arrive in
 * chunks (a paged list from the kube-apiserver); with a page size only the objects that can still be
 * on the requested page are kept, so memory follows the page, not the collection.
 */
export interface Selection {
  items: KubeObject[];
  /** Matches after filtering, before paging. */
  totalItems: number;
}

/** Per-object tests decided elsewhere (filters the kube-apiserver did not apply, a Service's selector). */
export type ObjectTest = (object: KubeObject) => boolean;

export interface SelectionOptions {
  kind: ResourceKind;
  query: ListQuery;
  /** `<platform>.io/alias-name`, searched by `?alias=`. */
  aliasAnnotation: string;
  /** Kind filters the kube-apiserver has already applied (field selectors): not tested again. */
  appliedUpstream?: ReadonlySet<string>;
  /** Extra tests every item must pass. */
  tests?: readonly ObjectTest[];
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Ascending order of the query's sort key; ties broken by name, so pages are stable. */
function ascendingOrder(kind: ResourceKind, query: ListQuery): (a: KubeObject, b: KubeObject) => number {
  // Namespace last: pods of one name in several namespaces still have one order.
  const byName = (a: KubeObject, b: KubeObject) =>
    compareText(nameOf(a), nameOf(b)) ||
    compareText(a.metadata?.namespace ?? '', b.metadata?.namespace ?? '');
  if (query.sortBy === 'name') return byName;
  const key =
    query.sortBy === 'startTime'
      ? (kind.startedMs ?? creationMs)
      : query.sortBy === 'lastUpdateTimestamp'
        ? (kind.updatedMs ?? creationMs)
        : creationMs;
  return (a, b) => key(a) - key(b) || byName(a, b);
}

export class ObjectSelector {
  readonly #matches: (object: KubeObject) => boolean;
  readonly #compare: (a: KubeObject, b: KubeObject) => number;
  readonly #offset: number;
  /** Objects after which nothing can be on the page: offset + limit, or unbounded. */
  readonly #keep: number;
  #kept: KubeObject[] = [];
  #sorted = true;
  #matched = 0;

  constructor(options: SelectionOptions) {
    const { kind, query } = options;
    this.#matches = matcher(options);
    const ascending = ascendingOrder(kind, query);
    // Descending is the ascending order reversed, ties included (as the node list orders them).
    this.#compare = query.ascending ? ascending : (a, b) => ascending(b, a);
    this.#offset = query.limit === undefined ? 0 : (query.page - 1) * query.limit;
    this.#keep = query.limit === undefined ? Infinity : this.#offset + query.limit;
  }

  add(objects: Iterable<KubeObject>): void {
    for (const object of objects) {
      if (!this.#matches(object)) continue;
      this.#matched++;
      if (this.#keep === Infinity) {
        this.#kept.push(object);
        this.#sorted = false;
        continue;
      }
      const kept = this.#kept;
      if (kept.length >= this.#keep && this.#compare(object, kept[kept.length - 1]!) >= 0) continue;
      kept.splice(insertionPoint(kept, object, this.#compare), 0, object);
      if (kept.length > this.#keep) kept.pop();
    }
  }

  result(): Selection {
    if (!this.#sorted) {
      this.#kept.sort(this.#compare);
      this.#sorted = true;
    }
    return {
      items: this.#kept.slice(this.#offset, this.#keep === Infinity ? undefined : this.#keep),
      totalItems: this.#matched,
    };
  }
}

function insertionPoint(
  sorted: KubeObject[],
  object: KubeObject,
  compare: (a: KubeObject, b: KubeObject) => number,
) {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compare(sorted[mid]!, object) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** One function testing everything the query asks of an object, cheapest tests first. */
function matcher(options: SelectionOptions): (object: KubeObject) => boolean {
  const { kind, query, aliasAnnotation } = options;
  const tests: ObjectTest[] = [];
  const { name, names, uid, labelSelector, label, annotation, alias } = query;
  if (name !== undefined) {
    const nameMatches = kind.nameMatches;
    tests.push(nameMatches ? (o) => nameMatches(o, name) : (o) => nameOf(o).includes(name));
  }
  if (names !== undefined) tests.push((o) => names.has(nameOf(o)));
  if (uid !== undefined) tests.push((o) => o.metadata?.uid === uid);
  if (!labelSelector.empty) tests.push((o) => labelSelector.matches(o.metadata?.labels));
  if (!label.empty) tests.push((o) => label.matches(o.metadata?.labels));
  if (!annotation.empty) tests.push((o) => annotation.matches(o.metadata?.annotations));
  if (alias !== undefined)
    tests.push((o) => (o.metadata?.annotations?.[aliasAnnotation] ?? '').includes(alias));
  const namespace = query.filters.get('namespace');
  if (namespace !== undefined) tests.push((o) => o.metadata?.namespace === namespace);
  for (const [parameter, value] of query.filters) {
    const filter = kind.filters[parameter];
    if (!filter?.matches || options.appliedUpstream?.has(parameter)) continue;
    const matches = filter.matches;
    tests.push((o) => matches(o, value));
  }
  tests.push(...(options.tests ?? []));
  return (object) => {
    for (const test of tests) if (!test(object)) return false;
    return true;
  };
}

/** The whole pipeline over objects already in hand (a cache). */
export function selectObjects(objects: Iterable<KubeObject>, options: SelectionOptions): Selection {
  const selector = new ObjectSelector(options);
  selector.add(objects);
  return selector.result();
}
