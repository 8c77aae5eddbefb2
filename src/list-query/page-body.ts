/**
 * The v1alpha3 list envelope `{"items":[…],"totalItems":N}` from its items' JSON texts: the bytes
 * `JSON.stringify({ items, totalItems })` would write, without serialising an item again.
 */
export function pageBody(items: readonly string[], totalItems: number): Buffer {
  return Buffer.from(`{"items":[${items.join(',')}],"totalItems":${totalItems}}`);
}

/**
 * Each object's JSON as served, made once and kept while the object lives: a cache replaces an object
 * when it changes, so a text is never served for a state it was not made from. `variant` names what
 * else the text was made from (a user's role): a different one makes it again.
 */
export class ObjectJson<T extends object> {
  readonly #texts = new WeakMap<T, { variant: string; text: string }>();

  text(object: T, variant: string, view: () => unknown): string {
    const kept = this.#texts.get(object);
    if (kept !== undefined && kept.variant === variant) return kept.text;
    const text = JSON.stringify(view());
    this.#texts.set(object, { variant, text });
    return text;
  }
}

/**
 * Page bodies of the current state, by query, bounded by total bytes: repeated identical queries of an
 * unchanged cache cost a lookup. Everything is dropped when the state changes, so a body is never
 * served for a state it was not built from.
 */
export class PageMemo {
  readonly #maxBytes: number;
  #stateTag: string | undefined;
  #bytes = 0;
  readonly #bodies = new Map<string, Buffer>();

  constructor(options: { maxBytes: number }) {
    this.#maxBytes = options.maxBytes;
  }

  /** The body remembered for `key` in `stateTag`, else the one `build` makes, remembered. */
  async answer(stateTag: string, key: string, build: () => Buffer | Promise<Buffer>): Promise<Buffer> {
    const known = this.get(stateTag, key);
    if (known) return known;
    const body = await build();
    this.set(stateTag, key, body);
    return body;
  }

  get(stateTag: string, key: string): Buffer | undefined {
    if (stateTag !== this.#stateTag) return undefined;
    return this.#bodies.get(key);
  }

  /** Keeps `body` as the answer to `key` in `stateTag` (the state read before it was built). */
  set(stateTag: string, key: string, body: Buffer): void {
    if (stateTag !== this.#stateTag) {
      this.#bodies.clear();
      this.#bytes = 0;
      this.#stateTag = stateTag;
    }
    if (body.length > this.#maxBytes || this.#bodies.has(key)) return;
    this.#bodies.set(key, body);
    this.#bytes += body.length;
    for (const [oldKey, old] of this.#bodies) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#bodies.delete(oldKey);
      this.#bytes -= old.length;
    }
  }
}
