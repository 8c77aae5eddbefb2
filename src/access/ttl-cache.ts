/**
 * A bounded map whose entries expire. Least recently used entries are evicted first when full.
 * Expired entries are kept (until evicted) so a caller can still fall back on them when the source
 * of truth is unreachable; `get` reports whether an entry is fresh.
 */
export interface CacheHit<V> {
  value: V;
  fresh: boolean;
  /** When the entry was stored, in the clock's milliseconds. */
  storedAtMs: number;
}

export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; storedAtMs: number; expiresAtMs: number }>();
  readonly #maxEntries: number;
  readonly #nowMs: () => number;
  #lastTouched: string | undefined;

  constructor(options: { maxEntries: number; nowMs?: () => number }) {
    if (options.maxEntries < 1) throw new Error('maxEntries must be at least 1');
    this.#maxEntries = options.maxEntries;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): CacheHit<V> | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    // Map iteration order is insertion order: re-inserting marks the entry most recently used. The entry
    // touched last is already there; most requests ask what the one before them asked.
    if (key !== this.#lastTouched) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      this.#lastTouched = key;
    }
    return { value: entry.value, fresh: this.#nowMs() < entry.expiresAtMs, storedAtMs: entry.storedAtMs };
  }

  set(key: string, value: V, ttlMs: number): void {
    const now = this.#nowMs();
    this.#entries.delete(key);
    this.#entries.set(key, { value, storedAtMs: now, expiresAtMs: now + ttlMs });
    this.#lastTouched = key;
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  clear(): void {
    this.#entries.clear();
    this.#lastTouched = undefined;
  }
}
