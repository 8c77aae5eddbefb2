/** The list's own metadata: the snapshot it was read at, and where the next page starts. */
export interface ListMetadata {
  resourceVersion?: string;
  continue?: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const ITEMS_KEY = /"items"\s*:\s*$/;

/**
 * Reads a LIST answer (`{"kind":…,"metadata":{…},"items":[{…},…]}`, as bytes) one item at a time:
 * `onItem` gets each item parsed on its own, and the list's metadata is returned.
 *
 * Why not JSON.parse of the page: V8 allocates what JSON.parse builds from a large text (or from a
 * slice of one) straight in the old generation, so every object of a page of Pods stays until a full
 * collection, and the heap the process then keeps grows by pages' worth. Each item decoded into its
 * own small string and parsed is young garbage once the caller has taken what it needs. JSON's
 * structural characters are ASCII, and UTF-8 never uses ASCII bytes inside a multi-byte character, so
 * the bytes can be scanned directly.
 */
export function eachListItem<T>(bytes: Buffer, onItem: (item: T) => void): ListMetadata {
  let depth = 0;
  let itemsStart = -1;
  let itemsEnd = -1;
  let itemStart = -1;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH)
        i++; // the escaped character, whatever it is
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth === 2 && c === OPEN_ARRAY && ITEMS_KEY.test(bytes.toString('latin1', Math.max(0, i - 16), i)))
        itemsStart = i;
      else if (depth === 3 && itemsStart >= 0 && itemsEnd < 0) itemStart = i;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 3 && itemStart >= 0) {
        onItem(JSON.parse(bytes.toString('utf8', itemStart, i + 1)) as T);
        itemStart = -1;
      } else if (depth === 2 && itemsStart >= 0 && itemsEnd < 0) itemsEnd = i;
      depth--;
      if (depth < 0) throw new SyntaxError('unbalanced brackets in a LIST answer');
    }
  }
  if (depth !== 0 || inString) throw new SyntaxError('truncated LIST answer');
  // What is left without the items is small: the list's kind, apiVersion and metadata.
  const rest =
    itemsStart >= 0
      ? bytes.toString('utf8', 0, itemsStart + 1) +
        bytes.toString('utf8', itemsEnd >= 0 ? itemsEnd : bytes.length)
      : bytes.toString('utf8');
  const list = JSON.parse(rest) as { metadata?: ListMetadata; items?: unknown };
  if (itemsStart < 0 && list.items !== null && list.items !== undefined)
    throw new SyntaxError('LIST answer with items that are not an array');
  return {
    ...(list.metadata?.resourceVersion !== undefined
      ? { resourceVersion: list.metadata.resourceVersion }
      : {}),
    ...(list.metadata?.continue ? { continue: list.metadata.continue } : {}),
  };
}
