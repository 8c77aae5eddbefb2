import type { KubernetesObject } from '@kubernetes/client-node';

/** The part of an informer a read-through cache needs. */
export interface WatchedCache<T> {
  get(name: string): T | undefined;
  onEvent(listener: (type: string, object: T) => void): () => void;
}

export interface ReadThroughOptions<T> {
  cache: WatchedCache<T>;
  /** A linearizable read from the apiserver; undefined when the object does not exist. */
  fetch: (name: string) => Promise<T | undefined>;
  /** How long an object fetched here stands in for the informer, which normally catches up within milliseconds. */
  positiveTtlMs: number;
  /** How long "does not exist" is believed before asking again. */
  negativeTtlMs: number;
  maxEntries: number;
  nowMs?: () => number;
}

interface Entry<T> {
  object: T | undefined;
  atMs: number;
  /**
   * Set when the entry records a deletion (seen by the watch, or made by this replica), not a read that
   * found nothing: the uid deleted, or '' when not known. Only a deletion outranks a write's answer.
   */
  deletedUid?: string;
}

/**
 * An informer plus a small side cache for what the informer has not seen yet: a Session another replica
 * created a moment ago, a User created just before its first login. On a miss it reads through to the
 * apiserver once and keeps the answer briefly; any informer event for the name makes the informer
 * authoritative again, so deletions seen by the watch apply at once.
 */
export class ReadThroughCache<T extends KubernetesObject> {
  readonly #options: ReadThroughOptions<T>;
  readonly #side = new Map<string, Entry<T>>();
  readonly #inFlight = new Map<string, Promise<T | undefined>>();
  readonly #nowMs: () => number;
  readonly #unsubscribe: () => void;

  constructor(options: ReadThroughOptions<T>) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#unsubscribe = options.cache.onEvent((type, object) => {
      const name = object.metadata?.name;
      if (!name) return;
      if (type === 'DELETED') {
        // Remembered as gone, so a write of ours whose answer arrives after the deletion cannot resurrect it.
        this.#store(name, undefined, object.metadata?.uid ?? '');
      } else if (this.#side.get(name)?.object) {
        // The informer has caught up. A "gone" entry stays: an older event still in flight must not
        // resurrect what we know was deleted; it ages out by its TTL.
        this.#side.delete(name);
      }
    });
  }

  /** Entries held beside the informer. */
  get size(): number {
    return this.#side.size;
  }

  close(): void {
    this.#unsubscribe();
    this.#side.clear();
  }

  /**
   * Without I/O. A fresh "gone" answer wins over the informer (it came from a linearizable read or our own
   * delete, and the watch may not have delivered the deletion yet); then the informer; then a fresh side entry.
   */
  peek(name: string): T | undefined {
    const side = this.#fresh(name);
    if (side && !side.object) return undefined;
    return this.#options.cache.get(name) ?? side?.object;
  }

  /**
   * An object this replica wrote (or read fresh) that the informer has not shown yet: the informer's next
   * event for the name clears it. Undefined when there is none, or the object is known to be gone.
   */
  unseen(name: string): T | undefined {
    return this.#fresh(name)?.object;
  }

  /** The object, reading through to the apiserver when neither the informer nor the side cache knows. */
  async get(name: string): Promise<T | undefined> {
    const side = this.#fresh(name);
    if (side && !side.object) return undefined;
    const cached = this.#options.cache.get(name) ?? side?.object;
    if (cached) return cached;
    return this.getFresh(name);
  }

  /** Always asks the apiserver (for decisions a stale copy must not make), and remembers the answer. */
  getFresh(name: string): Promise<T | undefined> {
    // Concurrent misses for one name share a single request.
    const pending = this.#inFlight.get(name);
    if (pending) return pending;
    const request = this.#options
      .fetch(name)
      .then((object) => {
        this.#store(name, object);
        return object;
      })
      .finally(() => this.#inFlight.delete(name));
    this.#inFlight.set(name, request);
    return request;
  }

  /**
   * Records an object this replica just wrote, so its next read does not wait for the watch — unless that
   * object is known to be deleted meanwhile (the write's answer can arrive after the watch reported the
   * deletion). A read that found nothing does not count: an object created after it exists.
   */
  remember(object: T): void {
    const name = object.metadata!.name!;
    const known = this.#fresh(name);
    const deleted = known?.deletedUid;
    if (deleted !== undefined && (deleted === '' || deleted === object.metadata?.uid)) return;
    this.#store(name, object);
  }

  /** Records that the object is gone (this replica deleted it; `uid`: the object deleted, when known). */
  forget(name: string, uid = ''): void {
    this.#store(name, undefined, uid);
  }

  #fresh(name: string): Entry<T> | undefined {
    const entry = this.#side.get(name);
    if (!entry) return undefined;
    if (!this.#expired(entry)) return entry;
    this.#side.delete(name);
    return undefined;
  }

  #store(name: string, object: T | undefined, deletedUid?: string): void {
    this.#side.delete(name);
    this.#side.set(name, {
      object,
      atMs: this.#nowMs(),
      ...(deletedUid === undefined ? {} : { deletedUid }),
    });
    // Map iteration is insertion order: the first key is the oldest entry. Entries that expired are
    // dropped here rather than when next read: most "gone" entries (a session deleted at its user's limit)
    // are never read again, and would otherwise be held until maxEntries.
    for (const [oldest, entry] of this.#side) {
      if (this.#side.size <= this.#options.maxEntries && !this.#expired(entry)) break;
      this.#side.delete(oldest);
    }
  }

  #expired(entry: Entry<T>): boolean {
    const ttl = entry.object ? this.#options.positiveTtlMs : this.#options.negativeTtlMs;
    return this.#nowMs() - entry.atMs > ttl;
  }
}
