import { Client, errors } from '@opensearch-project/opensearch';
import type { LoggingMetrics } from './logging-metrics.ts';
import type { QueryClause, SearchResponseBody } from './store-query.ts';

/**
 * The log store (Elasticsearch 7+ / OpenSearch search API) through the official OpenSearch client:
 * search, scroll and clear-scroll, each bounded by a timeout, abortable, counted and timed, with the
 * client's many error types reduced to the few the API distinguishes.
 */

export interface LogStoreOptions {
  /** Base URLs of the store's nodes (http or https). */
  hosts: string[];
  /** Basic auth when non-empty. */
  username: string;
  password: string;
  /** PEM bundle trusted for https hosts; empty: the system's CAs. */
  caPem: string;
  /** Accept any server certificate (verification is on unless this is set). */
  insecureSkipVerify: boolean;
  /** Bound on one call to the store (connect, send, answer). */
  requestTimeoutMs: number;
  metrics: Pick<LoggingMetrics, 'storeRequests' | 'storeRequestSeconds'>;
}

export type LogStoreFailure =
  /** Not reachable, refused, TLS failure, or a gateway in front of it answered 502/503/504. */
  | 'unavailable'
  /** No answer within the timeout. */
  | 'timeout'
  /** It answered with an error: our credentials, the query or its data were refused. */
  | 'rejected'
  /** We gave up (the client went away). */
  | 'aborted';

export class LogStoreError extends Error {
  readonly failure: LogStoreFailure;
  /** HTTP status the store answered with, when it answered. */
  readonly storeStatus: number | undefined;
  /** The store's error types, outermost first (`search_phase_execution_exception`, `too_many_buckets_exception`…). */
  readonly storeErrorTypes: string[];
  constructor(
    failure: LogStoreFailure,
    message: string,
    storeStatus?: number,
    storeErrorTypes: string[] = [],
  ) {
    super(message);
    this.name = 'LogStoreError';
    this.failure = failure;
    this.storeStatus = storeStatus;
    this.storeErrorTypes = storeErrorTypes;
  }
}

export interface SearchRequest {
  indices: string[];
  body: QueryClause;
  /** Opens a scroll cursor kept alive this long between pages (e.g. `1m`). */
  scroll?: string;
}

type StoreOperation = 'search' | 'scroll' | 'clear_scroll';

interface StoreErrorBody {
  error?: StoreErrorDetail | string;
}
interface StoreErrorDetail {
  type?: string;
  reason?: string;
  root_cause?: { type?: string; reason?: string }[];
  caused_by?: StoreErrorDetail;
}

function errorTypes(body: unknown): { types: string[]; reason: string } {
  const error = (body as StoreErrorBody | undefined)?.error;
  if (typeof error === 'string') return { types: [], reason: error };
  const types: string[] = [];
  let reason = '';
  for (let e: StoreErrorDetail | undefined = error; e; e = e.caused_by) {
    if (e.type) types.push(e.type);
    reason = e.reason ?? reason;
  }
  for (const root of error?.root_cause ?? [])
    if (root.type && !types.includes(root.type)) types.push(root.type);
  return { types, reason };
}

function toStoreError(err: unknown): LogStoreError {
  if (err instanceof LogStoreError) return err;
  if (err instanceof errors.RequestAbortedError)
    return new LogStoreError('aborted', 'request to the log store aborted');
  if (err instanceof errors.TimeoutError)
    return new LogStoreError('timeout', 'the log store did not answer in time');
  if (err instanceof errors.ConnectionError || err instanceof errors.NoLivingConnectionsError)
    return new LogStoreError('unavailable', `cannot reach the log store: ${err.message}`);
  if (err instanceof errors.ResponseError) {
    const status = err.statusCode;
    const { types, reason } = errorTypes(err.body);
    // The store reports some refusals of the query itself with 503 (too many buckets); a bare 5xx is a gateway.
    if ((status === 502 || status === 503 || status === 504) && !types.includes('too_many_buckets_exception'))
      return new LogStoreError('unavailable', `the log store answered ${status}`, status, types);
    return new LogStoreError(
      'rejected',
      `the log store answered ${status}${types.length ? ` ${types.join(' < ')}` : ''}${reason ? `: ${reason}` : ''}`,
      status,
      types,
    );
  }
  return new LogStoreError('unavailable', `log store call failed: ${(err as Error)?.message ?? String(err)}`);
}

export class LogStore {
  readonly #client: Client;
  readonly #metrics: LogStoreOptions['metrics'];

  constructor(options: LogStoreOptions) {
    const https = options.hosts.some((h) => h.startsWith('https:'));
    this.#client = new Client({
      nodes: options.hosts,
      ...(options.username ? { auth: { username: options.username, password: options.password } } : {}),
      ...(https
        ? {
            ssl: {
              rejectUnauthorized: !options.insecureSkipVerify,
              ...(options.caPem ? { ca: options.caPem } : {}),
            },
          }
        : {}),
      requestTimeout: options.requestTimeoutMs,
      // One attempt per configured node: a dead store must turn into a 503 within the timeout, not minutes.
      maxRetries: Math.max(0, options.hosts.length - 1),
      sniffOnStart: false,
    });
    this.#metrics = options.metrics;
  }

  /** Runs a search; with `scroll`, the answer carries `_scroll_id` for the next pages. */
  search(request: SearchRequest, signal?: AbortSignal): Promise<SearchResponseBody> {
    return this.#call('search', signal, () =>
      this.#client.search({
        index: request.indices,
        // Daily indices that do not exist (no logs that day) are skipped, not an error.
        ignore_unavailable: true,
        allow_no_indices: true,
        ...(request.scroll ? { scroll: request.scroll } : {}),
        body: request.body,
      }),
    );
  }

  /** The next page of a scroll cursor. */
  scroll(scrollId: string, keepAlive: string, signal?: AbortSignal): Promise<SearchResponseBody> {
    return this.#call('scroll', signal, () =>
      this.#client.scroll({ body: { scroll_id: scrollId, scroll: keepAlive } }),
    );
  }

  /** Releases a scroll cursor on the store. */
  async clearScroll(scrollId: string): Promise<void> {
    await this.#call('clear_scroll', undefined, () =>
      this.#client.clearScroll({ body: { scroll_id: scrollId } }),
    );
  }

  close(): Promise<void> {
    return this.#client.close();
  }

  async #call<T>(
    operation: StoreOperation,
    signal: AbortSignal | undefined,
    send: () => Promise<{ body: unknown }> & { abort: () => void },
  ): Promise<T> {
    const startedAt = process.hrtime.bigint();
    const observe = (outcome: string) => {
      this.#metrics.storeRequests.inc({ operation, outcome });
      this.#metrics.storeRequestSeconds.observe(
        { operation, outcome },
        Number(process.hrtime.bigint() - startedAt) / 1e9,
      );
    };
    if (signal?.aborted) {
      observe('aborted');
      throw new LogStoreError('aborted', 'request to the log store aborted');
    }
    const pending = send();
    // Returns nothing on purpose: abort() returns the request (a thenable), and an event listener that
    // returns a rejected thenable makes EventTarget rethrow the rejection as an uncaught exception.
    const abort = () => {
      pending.abort();
    };
    signal?.addEventListener('abort', abort, { once: true });
    try {
      const response = await pending;
      observe('ok');
      return response.body as T;
    } catch (err) {
      const failure = toStoreError(err);
      observe(failure.failure);
      throw failure;
    } finally {
      signal?.removeEventListener('abort', abort);
    }
  }
}
