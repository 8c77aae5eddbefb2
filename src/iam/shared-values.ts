/**
 * One frozen instance of each value that many cached objects repeat. The default roles of every project
 * carry the same rules and annotations (an `operator` Role's rules name some 25 API groups; its
 * aggregation annotation is 700 characters), and parsed JSON gives each object its own copy: at 5,000
 * projects that was most of the role cache's heap. Values are told equal by their JSON; the pool holds
 * them weakly, so a value no cached object uses any more is collected with its key.
 */
export class SharedValues {
  readonly #pool = new Map<string, WeakRef<object>>();
  readonly #forget = new FinalizationRegistry<string>((key) => {
    if (this.#pool.get(key)?.deref() === undefined) this.#pool.delete(key);
  });

  /** The pool's instance equal to `value` (frozen, never to be changed), or `value` itself, frozen, as the first. */
  share<T>(value: T): T {
    if (value === null || typeof value !== 'object') return value;
    const key = JSON.stringify(value);
    const held = this.#pool.get(key)?.deref();
    if (held !== undefined) return held as T;
    deepFreeze(value);
    this.#pool.set(key, new WeakRef(value));
    this.#forget.register(value, key);
    return value;
  }

  /** Distinct values held (for tests). */
  get size(): number {
    return this.#pool.size;
  }
}

function deepFreeze(value: object): void {
  if (Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value))
    if (child !== null && typeof child === 'object') deepFreeze(child);
}
