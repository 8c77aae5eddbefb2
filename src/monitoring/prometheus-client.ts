import { Agent, request, type Dispatcher } from 'undici';
import { VectorScanner, vectorOf, type Vector } from './vector-index.ts';

/** One series of a Prometheus answer: an instant sample (`value`) or a range (`values`). */
export interface PromSeries {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

/** The `data` of a Prometheus query answer. */
export interface PromData {
  resultType: 'vector' | 'matrix' | 'scalar' | 'string';
  result: PromSeries[] | [number, string];
}

export interface TargetMetadata {
  metric: string;
  type: string;
  help: string;
}

/** Prometheus refused, failed or did not answer: the message is safe to show (no endpoint, no token). */
export class PrometheusError extends Error {}

export interface PrometheusClientOptions {
  endpoint: string;
  /** Sent as `Authorization: Bearer …`; never logged. */
  bearerToken?: string;
  caPem?: string;
  timeoutMs: number;
  maxConcurrent: number;
  /** How long a successful answer is reused for the same call; identical calls in flight always share one. */
  cacheTtlMs: number;
  /** Most cached answers kept (the oldest go first). */
  maxCacheEntries?: number;
  now?: () => number;
}

interface CacheEntry {
  answer: Promise<unknown>;
  /** Set once the answer arrived; until then the entry is an in-flight call. */
  expiresAt?: number;
}

/**
 * A Prometheus HTTP API client bounded three ways: each call within `timeoutMs` (the wait for a slot
 * included), at most `maxConcurrent` calls at once, and one call for identical questions asked together
 * or within `cacheTtlMs` of each other.
 */
export class PrometheusClient {
  readonly #base: string;
  readonly #headers: Record<string, string>;
  readonly #dispatcher: Dispatcher;
  readonly #options: PrometheusClientOptions;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  constructor(options: PrometheusClientOptions) {
    this.#options = options;
    this.#base = options.endpoint.replace(/\/+$/, '');
    this.#headers = {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
      ...(options.bearerToken ? { authorization: `Bearer ${options.bearerToken}` } : {}),
    };
    this.#dispatcher = new Agent({
      connections: Math.max(options.maxConcurrent, 1),
      ...(options.caPem ? { connect: { ca: options.caPem } } : {}),
    });
  }

  /** `GET /api/v1/query`: an instant query at `time` (Unix seconds). */
  query(expr: string, time: number): Promise<PromData> {
    return this.#call<PromData>('/api/v1/query', {
      query: expr,
      time: String(time),
      timeout: this.#timeout(),
    });
  }

  /**
   * An instant query's series, located in Prometheus' answer rather than parsed (VectorScanner), for a
   * ranking that shows a page of thousands; none when the answer is not a vector. Cached apart from
   * query()'s parsed form.
   */
  queryVector(expr: string, time: number): Promise<Vector> {
    return this.#call(
      '/api/v1/query',
      { query: expr, time: String(time), timeout: this.#timeout() },
      async (body, status) => {
        const scanner = new VectorScanner();
        for await (const chunk of body) scanner.push(chunk);
        const indexed = scanner.end();
        if (indexed) return indexed;
        const data = dataOf<PromData>(Buffer.concat(scanner.chunks), status);
        return vectorOf(
          data.resultType === 'vector' && Array.isArray(data.result) ? (data.result as PromSeries[]) : [],
        );
      },
      'vector',
    );
  }

  /** `GET /api/v1/query_range`. */
  queryRange(expr: string, start: number, end: number, stepSeconds: number): Promise<PromData> {
    return this.#call<PromData>('/api/v1/query_range', {
      query: expr,
      start: String(start),
      end: String(end),
      step: String(stepSeconds),
      timeout: this.#timeout(),
    });
  }

  /** `GET /api/v1/targets/metadata`, of the targets `matchTarget` selects (all when absent). */
  targetsMetadata(matchTarget?: string): Promise<TargetMetadata[]> {
    return this.#call<TargetMetadata[]>(
      '/api/v1/targets/metadata',
      matchTarget ? { match_target: matchTarget } : {},
    );
  }

  /** `GET /api/v1/series`: the label sets of the series `match` selects in [start, end]. */
  series(match: string, start: number, end: number): Promise<Record<string, string>[]> {
    return this.#call<Record<string, string>[]>('/api/v1/series', {
      'match[]': match,
      start: String(start),
      end: String(end),
    });
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }

  #call<T>(
    path: string,
    params: Record<string, string>,
    decode: (body: AsyncIterable<Buffer>, status: number) => Promise<T> = parsed<T>,
    form = 'parsed',
  ): Promise<T> {
    const body = new URLSearchParams(params).toString();
    const key = `${form} ${path}?${body}`;
    const now = this.#now();
    const held = this.#cache.get(key);
    if (held && (held.expiresAt === undefined || held.expiresAt > now)) return held.answer as Promise<T>;
    const answer = this.#bounded((signal) => this.#post(path, body, decode, signal));
    const entry: CacheEntry = { answer };
    this.#cache.set(key, entry);
    this.#evictOverflow();
    answer.then(
      () => {
        if (this.#options.cacheTtlMs > 0) entry.expiresAt = this.#now() + this.#options.cacheTtlMs;
        else if (this.#cache.get(key) === entry) this.#cache.delete(key);
      },
      // A failure is not remembered: the next caller asks again.
      () => {
        if (this.#cache.get(key) === entry) this.#cache.delete(key);
      },
    );
    return answer;
  }

  #evictOverflow(): void {
    const max = this.#options.maxCacheEntries ?? 1000;
    // Oldest first (a Map iterates in insertion order); calls in flight stay, others wait on them.
    for (const [key, entry] of this.#cache) {
      if (this.#cache.size <= max) return;
      if (entry.expiresAt !== undefined) this.#cache.delete(key);
    }
  }

  /** Runs `work` when a slot is free, the wait and the work both within the timeout. */
  async #bounded<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { timeoutMs } = this.#options;
    const signal = AbortSignal.timeout(timeoutMs);
    await this.#acquire(signal);
    try {
      return await work(signal);
    } catch (err) {
      if (signal.aborted) throw new PrometheusError(`Prometheus did not answer within ${timeoutMs / 1000}s`);
      throw err;
    } finally {
      this.#release();
    }
  }

  #acquire(signal: AbortSignal): Promise<void> {
    if (this.#running < this.#options.maxConcurrent) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener('abort', giveUp);
        this.#running++;
        resolve();
      };
      const giveUp = () => {
        const at = this.#waiting.indexOf(go);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(
          new PrometheusError(
            `no Prometheus query slot within ${this.#options.timeoutMs / 1000}s (monitoring.maxConcurrentQueries)`,
          ),
        );
      };
      signal.addEventListener('abort', giveUp, { once: true });
      this.#waiting.push(go);
    });
  }

  #release(): void {
    this.#running--;
    this.#waiting.shift()?.();
  }

  async #post<T>(
    path: string,
    body: string,
    decode: (body: AsyncIterable<Buffer>, status: number) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${this.#base}${path}`, {
        method: 'POST',
        headers: this.#headers,
        body,
        dispatcher: this.#dispatcher,
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).name;
      throw new PrometheusError(`cannot reach Prometheus: ${code}`);
    }
    try {
      return await decode(res.body, res.statusCode);
    } catch (err) {
      if (err instanceof PrometheusError) throw err;
      throw new PrometheusError(`Prometheus answered ${res.statusCode} without a JSON body`);
    }
  }

  /** Prometheus stops evaluating when this server stops waiting. */
  #timeout(): string {
    return `${this.#options.timeoutMs / 1000}s`;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}

/** The `data` of a Prometheus answer read whole. */
async function parsed<T>(body: AsyncIterable<Buffer>, status: number): Promise<T> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return dataOf<T>(Buffer.concat(chunks), status);
}

/** The `data` of a Prometheus answer, or the PrometheusError its failure means. */
function dataOf<T>(body: Buffer, status: number): T {
  let parsed: { status?: string; data?: T; errorType?: string; error?: string };
  try {
    // As a TextDecoder reads it: a byte-order mark skipped.
    parsed = JSON.parse(new TextDecoder().decode(body)) as typeof parsed;
  } catch {
    throw new PrometheusError(`Prometheus answered ${status} without a JSON body`);
  }
  if (parsed.status !== 'success') {
    // As Prometheus' Go client words it: `<errorType>: <error>`.
    throw new PrometheusError(`${parsed.errorType ?? 'error'}: ${parsed.error ?? `status ${status}`}`);
  }
  return parsed.data as T;
}
