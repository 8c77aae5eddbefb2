import type { Logger } from '../observability/logger.ts';
import type { CacheMetrics } from './cache-metrics.ts';
import { kubeStream, type KubeCredentials } from './kube-request.ts';
import { LineSplitter } from './line-splitter.ts';

/** A resourceVersion as the apiserver hands it out: opaque text, only compared for equality. */
export type ResourceVersion = string;

export type InformerEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export type InformerListener<T> = (type: InformerEventType, object: T, previous: T | undefined) => void;

export interface ListResult<T> {
  items: T[];
  metadata?: { resourceVersion?: ResourceVersion };
}

/** Lists every object of the kind (one consistent snapshot). */
export type ListFn<T> = () => Promise<ListResult<T>>;

/** A raw watch event as the apiserver streams it. */
export interface WatchEvent {
  type: string;
  object: unknown;
}

/**
 * Opens a watch from `resourceVersion`; calls `onEvent` per event and `onDone` exactly once when the
 * stream ends (error or server close). Resolves to a handle that aborts the watch.
 */
export type WatchFn = (
  query: { resourceVersion: ResourceVersion; timeoutSeconds: number },
  onEvent: (event: WatchEvent) => void,
  onDone: (err: unknown) => void,
) => Promise<{ abort(): void }>;

/**
 * What the informer reads of an object. Typed client objects (V1Node) fit, and so do objects kept as
 * the apiserver's raw JSON (timestamps as text), which a cache that re-serialises them needs.
 */
export interface CachedObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface InformerOptions<T extends object> {
  /** Label for logs and metrics, e.g. "nodes". */
  kind: string;
  list: ListFn<T>;
  watch: WatchFn;
  /** Applied to every object before it is stored (e.g. drop managedFields). The result is frozen. */
  transform?: (object: T) => T;
  /**
   * For objects stored in a form of their own, without `metadata`: the store key (`namespace/name`, or
   * the name of a cluster-scoped object, so `get()` finds it) and the resourceVersion. By default both
   * come from `metadata`.
   */
  keyOf?: (object: T) => string;
  versionOf?: (object: T) => ResourceVersion | undefined;
  logger: Logger;
  metrics?: CacheMetrics;
  /** First retry delay after an error; doubles up to maxBackoffMs, with jitter. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Server-side watch timeout; the apiserver ends the watch after about this long and we resume it. */
  watchTimeoutSeconds?: number;
  /** Now, injectable for tests. */
  now?: () => number;
}

/** How current the cache is: connected means a watch is open and delivering. */
export interface Freshness {
  connected: boolean;
  /** 0 while connected; otherwise seconds since the cache was last known to be current. */
  staleSeconds: number;
}

/** The apiserver said our resourceVersion is too old: only a fresh list can recover. */
class ResourceExpired extends Error {}

/**
 * A read-only cache of one kind kept current by list + watch.
 *
 * Restarts after any error with capped exponential back-off and jitter, relists on 410 Gone, and
 * resumes a watch the server closed from the last resourceVersion seen (bookmarks included). Stored
 * objects are frozen and shared: callers must never mutate them (the freeze enforces it).
 */
export class Informer<T extends object> {
  readonly kind: string;
  readonly #options: InformerOptions<T>;
  readonly #keyOf: (object: T) => string;
  readonly #versionOf: (object: T) => ResourceVersion | undefined;
  readonly #store = new Map<string, T>();
  readonly #listeners = new Set<InformerListener<T>>();
  readonly #syncWaiters = new Set<() => void>();
  readonly #now: () => number;
  #synced = false;
  #running = false;
  #connected = false;
  #currentSince = 0;
  #lastEventAt = 0;
  #resourceVersion: ResourceVersion = '';
  #abortWatch: (() => void) | undefined;
  #wakeUp: (() => void) | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: InformerOptions<T>) {
    this.kind = options.kind;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#keyOf = options.keyOf ?? ((object) => keyOfObject(object as CachedObject));
    this.#versionOf = options.versionOf ?? ((object) => (object as CachedObject).metadata?.resourceVersion);
    options.metrics?.track(this);
  }

  /** True once the first list has been stored; stays true through later outages (stale data is served). */
  get synced(): boolean {
    return this.#synced;
  }

  get size(): number {
    return this.#store.size;
  }

  /** The resourceVersion the cache is current at. */
  get resourceVersion(): ResourceVersion {
    return this.#resourceVersion;
  }

  /** Milliseconds since the epoch of the last watch event or list, 0 before the first. */
  get lastEventAt(): number {
    return this.#lastEventAt;
  }

  freshness(): Freshness {
    if (this.#connected) return { connected: true, staleSeconds: 0 };
    const since = this.#currentSince || this.#now();
    return { connected: false, staleSeconds: Math.max(0, Math.floor((this.#now() - since) / 1000)) };
  }

  get(name: string, namespace?: string): T | undefined {
    return this.#store.get(keyOf(name, namespace));
  }

  list(): T[] {
    return [...this.#store.values()];
  }

  /** The cached objects without copying them into an array (do not change the cache while iterating). */
  values(): IterableIterator<T> {
    return this.#store.values();
  }

  /** Subscribes to changes (including those a relist discovers). Returns the unsubscribe function. */
  onEvent(listener: InformerListener<T>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#connected = false;
    this.#abortWatch?.();
    this.#wakeUp?.();
    await this.#loop;
  }

  /**
   * Calls `listener` once, when the first list has been stored (at once if it has). Returns the function
   * that cancels it. Unlike waitForSynced it sets no timer, so it can wait as long as an outage lasts.
   */
  whenSynced(listener: () => void): () => void {
    if (this.#synced) {
      listener();
      return () => {};
    }
    const once = () => listener();
    this.#syncWaiters.add(once);
    return () => this.#syncWaiters.delete(once);
  }

  waitForSynced(timeoutMs: number): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#syncWaiters.delete(done);
        reject(new Error(`${this.kind} cache not synced within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#syncWaiters.add(done);
    });
  }

  async #run(): Promise<void> {
    const initial = this.#options.initialBackoffMs ?? 200;
    const max = this.#options.maxBackoffMs ?? 30_000;
    let failures = 0;
    let needList = true;
    while (this.#running) {
      try {
        if (needList) {
          await this.#relist();
          needList = false;
        }
        await this.#watchOnce();
        failures = 0; // a watch the server closed normally is resumed at once
      } catch (err) {
        if (!this.#running) break;
        this.#connected = false;
        if (err instanceof ResourceExpired) {
          this.#options.logger.info('watch expired, relisting', { kind: this.kind });
          needList = true;
          continue;
        }
        failures++;
        // After repeated failures a relist is the safe way back, whatever the cause.
        if (failures >= 3) needList = true;
        const delayMs = Math.min(max, initial * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);
        this.#options.metrics?.restarts.inc({ kind: this.kind });
        this.#options.logger.warn('cache watch failed, retrying', {
          kind: this.kind,
          error: describeError(err),
          retryInMs: Math.round(delayMs),
          staleSeconds: this.freshness().staleSeconds,
        });
        await this.#pause(delayMs);
      }
    }
    this.#connected = false;
  }

  async #relist(): Promise<void> {
    const result = await this.#options.list();
    const fresh = new Map<string, T>();
    for (const item of result.items) {
      const stored = this.#prepare(item);
      fresh.set(this.#keyOf(stored), stored);
    }
    const previous = new Map(this.#store);
    this.#store.clear();
    for (const [key, object] of fresh) this.#store.set(key, object);
    this.#resourceVersion = result.metadata?.resourceVersion ?? '';
    this.#markCurrent();
    // Current as of this list: following the kube-apiserver, until the watch that resumes from it fails.
    this.#connected = true;
    this.#options.metrics?.relists.inc({ kind: this.kind });

    for (const [key, object] of fresh) {
      const old = previous.get(key);
      if (!old) this.#emit('ADDED', object, undefined);
      else if (this.#versionOf(old) !== this.#versionOf(object)) this.#emit('MODIFIED', object, old);
    }
    for (const [key, old] of previous) if (!fresh.has(key)) this.#emit('DELETED', old, undefined);

    if (!this.#synced) {
      this.#synced = true;
      this.#options.logger.info('cache synced', { kind: this.kind, objects: this.#store.size });
      for (const waiter of this.#syncWaiters) waiter();
      this.#syncWaiters.clear();
    }
  }

  #watchOnce(): Promise<void> {
    // Spread server-side timeouts so many caches do not all reconnect at the same moment.
    const base = this.#options.watchTimeoutSeconds ?? 300;
    const timeoutSeconds = Math.round(base * (1 + Math.random() / 4));
    return new Promise<void>((resolve, reject) => {
      let finished = false;
      const finish = (err?: unknown) => {
        if (finished) return;
        finished = true;
        this.#abortWatch = undefined;
        if (err) reject(err);
        else resolve();
      };
      const onEvent = (event: WatchEvent) => {
        try {
          this.#apply(event);
        } catch (err) {
          finish(err); // before abort(): aborting reports a plain close, which would hide the error
          handle?.abort();
        }
      };
      const onDone = (err: unknown) => finish(err ?? undefined);
      let handle: { abort(): void } | undefined;
      this.#options
        .watch({ resourceVersion: this.#resourceVersion, timeoutSeconds }, onEvent, onDone)
        .then((h) => {
          handle = h;
          if (finished) {
            h.abort();
            return;
          }
          this.#connected = true;
          this.#abortWatch = () => {
            h.abort();
            finish();
          };
          if (!this.#running) this.#abortWatch();
        }, finish);
    }).finally(() => {
      // Still following: a watch the server closed normally is resumed at once from its resourceVersion,
      // and the hand-over is no outage (it used to read as one: the header said "0 s stale" and the pod
      // index sent its pages to the kube-apiserver meanwhile). A failure ends it in #run.
      if (this.#connected) this.#currentSince = this.#now();
    });
  }

  #apply(event: WatchEvent): void {
    if (event.type === 'ERROR') {
      const status = event.object as { code?: number; message?: string } | undefined;
      if (status?.code === 410) throw new ResourceExpired(status.message ?? 'resourceVersion too old');
      throw new Error(`watch error ${status?.code ?? ''}: ${status?.message ?? 'unknown'}`);
    }
    if (event.type === 'BOOKMARK') {
      // A bookmark is always the apiserver's own object, whatever form the watch gives the others.
      const rv = (event.object as CachedObject | undefined)?.metadata?.resourceVersion;
      if (rv) this.#resourceVersion = rv;
      this.#markCurrent();
      return;
    }
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED' && event.type !== 'DELETED') {
      throw new Error(`unexpected watch event type ${JSON.stringify(event.type)}`);
    }
    const object = event.object as T;
    const rv = this.#versionOf(object);
    const key = this.#keyOf(object);
    const previous = this.#store.get(key);
    if (event.type === 'DELETED') {
      this.#store.delete(key);
      if (rv) this.#resourceVersion = rv;
      this.#markCurrent();
      this.#emit('DELETED', previous ?? this.#prepare(object), undefined);
      return;
    }
    const stored = this.#prepare(object);
    this.#store.set(key, stored);
    if (rv) this.#resourceVersion = rv;
    this.#markCurrent();
    this.#emit(previous ? 'MODIFIED' : 'ADDED', stored, previous);
  }

  #prepare(object: T): T {
    const transformed = this.#options.transform ? this.#options.transform(object) : object;
    return deepFreeze(transformed);
  }

  #markCurrent(): void {
    const now = this.#now();
    this.#lastEventAt = now;
    this.#currentSince = now;
  }

  #emit(type: InformerEventType, object: T, previous: T | undefined): void {
    for (const listener of this.#listeners) {
      try {
        listener(type, object, previous);
      } catch (err) {
        this.#options.logger.error('cache listener failed', { kind: this.kind, error: describeError(err) });
      }
    }
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wakeUp = undefined;
        resolve();
      }, ms);
      this.#wakeUp = () => {
        clearTimeout(timer);
        this.#wakeUp = undefined;
        resolve();
      };
    });
  }
}

function keyOf(name: string, namespace?: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function keyOfObject(object: CachedObject): string {
  return keyOf(object.metadata?.name ?? '', object.metadata?.namespace);
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code =
      (err as { statusCode?: number; code?: number | string }).statusCode ?? (err as { code?: unknown }).code;
    return code !== undefined ? `${err.message} (${String(code)})` : err.message;
  }
  return String(err);
}

function deepFreeze<V>(value: V): V {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * The watch of a kind at `path` (e.g. /api/v1/nodes), with bookmarks, on the KubeConfig's connections.
 * `silenceLimitMs` is the watchdog: a stream with no bytes for that long is torn down and resumed (a
 * half-open connection otherwise looks like a quiet cluster forever). The apiserver sends a bookmark
 * about every 60 s on a quiet watch (measured on v1.36), so 90 s of silence means the stream is dead.
 *
 * Read as a Node stream (kubeStream) split into lines here, not through @kubernetes/client-node's Watch:
 * that one reads the body through fetch, a web stream turned back into a Node stream and readline, and
 * re-arms a timer per chunk, and every replica pays it for every event of every cache (each login's
 * writes come back as three events to each replica).
 */
export function kubeWatch(
  kubeConfig: KubeCredentials,
  path: string,
  silenceLimitMs = 90_000,
  /** Extra query parameters, e.g. a fieldSelector (the list must use the same). */
  params: Readonly<Record<string, string>> = {},
): WatchFn {
  return async (query, onEvent, onDone) => {
    const search = new URLSearchParams({
      ...params,
      watch: 'true',
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(query.timeoutSeconds),
      ...(query.resourceVersion ? { resourceVersion: query.resourceVersion } : {}),
    });

    const controller = new AbortController();
    let silent = false;
    const watchdog = setTimeout(() => {
      silent = true;
      controller.abort();
    }, silenceLimitMs);
    watchdog.unref();
    let ended = false;
    const end = (err: unknown) => {
      if (ended) return;
      ended = true;
      clearTimeout(watchdog);
      controller.abort();
      onDone(silent ? new Error(`watch ${path}: no bytes for ${silenceLimitMs} ms`) : err);
    };
    try {
      const response = await kubeStream(kubeConfig, `${path}?${search}`, controller.signal);
      watchdog.refresh();
      const lines = new LineSplitter();
      response.body.on('data', (chunk: Buffer) => {
        watchdog.refresh();
        for (const line of lines.push(chunk)) {
          let event: WatchEvent;
          try {
            event = JSON.parse(line.toString('utf8')) as WatchEvent;
          } catch {
            continue; // not an event (an empty line): nothing to apply
          }
          onEvent({ type: event.type, object: event.object });
          if (ended) return; // the listener aborted the watch
        }
      });
      response.body.once('end', () => end(null));
      response.body.once('close', () => end(null));
      response.body.once('error', end);
    } catch (err) {
      end(err);
    }
    // Aborted by its owner: no more events, even from the chunk being read.
    return { abort: () => end(null) };
  };
}
