import type { InformerListener } from './informer.ts';

/** The part of an informer an index needs. */
interface Events<T> {
  onEvent(listener: InformerListener<T>): () => void;
}

/**
 * The objects of an informer's cache grouped by a value of theirs (a session's user, say), kept current
 * from the informer's events: a lookup reads one group instead of walking the whole cache. Made before
 * the informer starts, it sees the first list as ADDED events; a relist's changes come as events too.
 */
export class InformerIndex<T extends object> {
  readonly #groups = new Map<string, Map<string, T>>();
  readonly #groupOf: (object: T) => string | undefined;
  readonly #keyOf: (object: T) => string;
  readonly #unsubscribe: () => void;

  constructor(
    informer: Events<T>,
    groupOf: (object: T) => string | undefined,
    /** The object's key in its informer (its name, for cluster-scoped objects). */
    keyOf: (object: T) => string,
  ) {
    this.#groupOf = groupOf;
    this.#keyOf = keyOf;
    this.#unsubscribe = informer.onEvent((type, object, previous) => {
      if (previous) this.#remove(previous);
      if (type === 'DELETED') this.#remove(object);
      else this.#add(object);
    });
  }

  /** The group's objects, as the cache has them now (a fresh array). */
  get(group: string): T[] {
    const members = this.#groups.get(group);
    return members ? [...members.values()] : [];
  }

  close(): void {
    this.#unsubscribe();
    this.#groups.clear();
  }

  #add(object: T): void {
    const group = this.#groupOf(object);
    if (group === undefined) return;
    let members = this.#groups.get(group);
    if (!members) {
      members = new Map();
      this.#groups.set(group, members);
    }
    members.set(this.#keyOf(object), object);
  }

  #remove(object: T): void {
    const group = this.#groupOf(object);
    if (group === undefined) return;
    const members = this.#groups.get(group);
    if (!members?.delete(this.#keyOf(object))) return;
    if (members.size === 0) this.#groups.delete(group);
  }
}
