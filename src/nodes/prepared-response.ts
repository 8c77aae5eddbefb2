import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback, constants as zlibConstants } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';

const gzip = promisify(gzipCallback);

/** A response body built once and shared by every request that asks the same thing of the same state. */
export class PreparedBody {
  readonly etag: string;
  readonly body: Buffer;
  #gzipped: Promise<Buffer> | undefined;

  constructor(etag: string, body: Buffer) {
    this.etag = etag;
    this.body = body;
  }

  /** Compressed on first use (off the event loop), then reused. Level 1: JSON compresses well even so. */
  gzipped(): Promise<Buffer> {
    this.#gzipped ??= gzip(this.body, { level: zlibConstants.Z_BEST_SPEED });
    return this.#gzipped;
  }
}

/** A weak ETag from the cache state and the canonical query: no body is needed to answer a 304. */
export function etagFor(stateTag: string, canonicalQuery: string): string {
  const hash = createHash('sha1').update(canonicalQuery).digest('base64url').slice(0, 16);
  return `W/"${stateTag}.${hash}"`;
}

/**
 * ETags of the current cache state by canonical query, so a repeated query costs a map lookup rather than a
 * hash. Dropped whole when the state changes; bounded, since queries are chosen by clients.
 */
export class EtagMemo {
  readonly #maxEntries: number;
  #stateTag = '';
  readonly #tags = new Map<string, string>();

  constructor(options: { maxEntries: number }) {
    this.#maxEntries = options.maxEntries;
  }

  get(stateTag: string, canonicalQuery: string): string {
    if (stateTag !== this.#stateTag) {
      this.#tags.clear();
      this.#stateTag = stateTag;
    }
    let etag = this.#tags.get(canonicalQuery);
    if (etag === undefined) {
      etag = etagFor(stateTag, canonicalQuery);
      if (this.#tags.size >= this.#maxEntries) this.#tags.delete(this.#tags.keys().next().value!);
      this.#tags.set(canonicalQuery, etag);
    }
    return etag;
  }
}

/** RFC 9110 weak comparison against If-None-Match (`*` matches anything). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

/**
 * Bodies of the current cache state, keyed by query, bounded by total bytes. Everything is dropped
 * when the state changes, so a body is never served for a state it was not built from.
 */
export class BodyMemo {
  readonly #maxBytes: number;
  #stateTag = '';
  #bytes = 0;
  readonly #bodies = new Map<string, PreparedBody>();

  constructor(options: { maxBytes: number }) {
    this.#maxBytes = options.maxBytes;
  }

  get(stateTag: string, key: string, etag: string, build: () => Buffer): PreparedBody {
    if (stateTag !== this.#stateTag) {
      this.#bodies.clear();
      this.#bytes = 0;
      this.#stateTag = stateTag;
    }
    const found = this.#bodies.get(key);
    if (found) return found;
    const prepared = new PreparedBody(etag, build());
    if (prepared.body.length <= this.#maxBytes) {
      this.#bodies.set(key, prepared);
      this.#bytes += prepared.body.length;
      for (const [oldKey, old] of this.#bodies) {
        if (this.#bytes <= this.#maxBytes) break;
        this.#bodies.delete(oldKey);
        this.#bytes -= old.body.length;
      }
    }
    return prepared;
  }
}

export interface SendOptions {
  /** Bodies at least this large are gzip-compressed for clients that accept it. */
  gzipMinBytes: number;
  /** The client asked for gzip (the route reads Accept-Encoding). */
  acceptsGzip: boolean;
  headers?: Record<string, string>;
}

/** Headers common to cached reads: revalidate every time (cheap with the ETag), never share. */
export function setCacheHeaders(res: ServerResponse, etag: string): void {
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', 'private, no-cache');
  res.setHeader('Vary', 'Accept-Encoding');
}

/** Sends a 304 if the client holds this ETag. Returns true when it did. */
export function sendNotModified(req: IncomingMessage, res: ServerResponse, etag: string): boolean {
  if (!matchesIfNoneMatch(req.headers['if-none-match'], etag)) return false;
  res.statusCode = 304;
  res.end();
  return true;
}

export async function sendJson(res: ServerResponse, prepared: PreparedBody, options: SendOptions) {
  let body = prepared.body;
  if (body.length >= options.gzipMinBytes && options.acceptsGzip) {
    body = await prepared.gzipped();
    res.setHeader('Content-Encoding', 'gzip');
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}
