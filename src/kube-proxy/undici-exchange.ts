import type http from 'node:http';
import type { Dispatcher } from 'undici';

/** Response headers that describe the upstream connection (RFC 9110 §7.6.1): never relayed. */
const CONNECTION_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

/** Request headers that describe the client's connection, or that undici frames itself: never sent on. */
const HOP_BY_HOP = new Set([...CONNECTION_HEADERS, 'expect', 'host']);

const BODILESS = new Set([204, 304]);

export interface ExchangeHooks {
  /** The answer's collect limit when it is one object or list; 0 streams it. */
  collectUpTo: number;
  onAnswer(status: number): void;
  /** Failed before an answer (or the answer broke off while being collected). */
  onFailure(err: Error, answered: boolean): void;
}

/** The request's headers for undici: a flat name/value list without hop-by-hop ones, the upstream's Host first. */
export function upstreamHeaders(req: http.IncomingMessage, host: string): string[] {
  const out: string[] = ['host', host];
  const headers = req.headers;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    if (typeof value === 'string') out.push(name, value);
    else for (const one of value) out.push(name, one);
  }
  return out;
}

/**
 * One proxied request on undici's dispatch API: the upstream's status, headers and body go straight to
 * the client's response, with no ClientRequest, IncomingMessage or Readable between them; a streamed
 * answer pauses the upstream while the client's socket is full.
 *
 * Why undici rather than one `https.request` per request: the node:https client builds a ClientRequest
 * and an IncomingMessage (two streams, their listeners and timers) for every request, and pipes the body
 * through them. In pinned A/B runs against that client (1,000 nodes, docs/benchmarks.md, "The proxy")
 * the server spent 0.362–0.423 ms of CPU per proxied request against 0.43–0.44 ms, 16% less over the
 * fifteen rounds' medians.
 *
 * Why collect: the kube-apiserver sends a list in 2 kB HTTP chunks. Streamed, each goes out with its own
 * chunk framing; collected, a 33 kB page is one write with a Content-Length (5–12% less CPU per page).
 */
export class UndiciExchange implements Dispatcher.DispatchHandler {
  readonly #res: http.ServerResponse;
  readonly #hooks: ExchangeHooks;
  #controller: Dispatcher.DispatchController | undefined;
  /** Ended on purpose (the client left, the session ended): its error is expected. */
  #quiet = false;
  #answered = false;
  #done = false;
  #collect = false;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #relayed: string[] = [];
  #corked = false;
  #waitingDrain = false;

  constructor(res: http.ServerResponse, hooks: ExchangeHooks) {
    this.#res = res;
    this.#hooks = hooks;
  }

  get answered(): boolean {
    return this.#answered;
  }

  /** Stops the upstream side without telling the client anything (the caller does that). */
  stop(): void {
    if (this.#done) return;
    this.#quiet = true;
    this.#controller?.abort(new Error('proxied request ended'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#quiet) controller.abort(new Error('proxied request ended'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: http.IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.#answered = true;
    this.#hooks.onAnswer(statusCode);
    const res = this.#res;
    res.statusCode = statusCode;
    if (statusMessage) res.statusMessage = statusMessage;
    const connection = headers['connection'];
    const named = connection ? connectionNamed(connection) : undefined;
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined || CONNECTION_HEADERS.has(name) || named?.has(name)) continue;
      res.setHeader(name, value);
      this.#relayed.push(name);
    }
    const length = headers['content-length'];
    const limit = this.#hooks.collectUpTo;
    this.#collect =
      limit > 0 && !BODILESS.has(statusCode) && (length === undefined || Number(length) <= limit);
    if (!this.#collect) this.#startStreaming();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#collect) {
      this.#chunks.push(chunk);
      this.#bytes += chunk.length;
      if (this.#bytes <= this.#hooks.collectUpTo) return;
      // Larger than promised (no Content-Length): stream after all, starting with what came so far.
      this.#collect = false;
      this.#res.removeHeader('content-length');
      const head = this.#chunks;
      this.#chunks = [];
      this.#startStreaming();
      for (const one of head) this.#write(controller, one);
      return;
    }
    this.#write(controller, chunk);
  }

  onResponseEnd(): void {
    this.#done = true;
    const res = this.#res;
    if (res.destroyed) return;
    if (!this.#collect) {
      if (!res.writableEnded) res.end();
      return;
    }
    res.setHeader('content-length', this.#bytes);
    const socket = res.socket;
    socket?.cork();
    for (const chunk of this.#chunks) res.write(chunk);
    res.end();
    socket?.uncork();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#done = true;
    if (this.#quiet) return;
    const res = this.#res;
    if (!this.#answered) return this.#hooks.onFailure(err, false);
    if (this.#collect && !res.headersSent) {
      // The error answer must not carry the broken answer's headers (its Content-Length above all).
      for (const name of this.#relayed) res.removeHeader(name);
      return this.#hooks.onFailure(err, true);
    }
    // A stream cut upstream must look cut to the client too, not like a complete answer.
    if (!res.writableEnded && !res.destroyed) res.destroy();
  }

  #startStreaming(): void {
    const res = this.#res;
    this.#cork();
    // A quiet watch must not look hung: its headers go out at once.
    if (res.getHeader('content-length') === undefined) res.flushHeaders();
  }

  #write(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const res = this.#res;
    if (res.writableEnded || res.destroyed) return;
    this.#cork();
    if (res.write(chunk) || this.#waitingDrain) return;
    this.#waitingDrain = true;
    controller.pause();
    res.once('drain', () => {
      this.#waitingDrain = false;
      controller.resume();
    });
  }

  /** One socket write per event-loop turn rather than per upstream chunk; res.end() uncorks a finished answer. */
  #cork(): void {
    const res = this.#res;
    const socket = res.socket;
    if (!socket || this.#corked || res.writableEnded || socket.destroyed) return;
    this.#corked = true;
    socket.cork();
    setImmediate(() => {
      this.#corked = false;
      if (!res.writableEnded && !socket.destroyed) socket.uncork();
    });
  }
}

function connectionNamed(value: string | string[]): Set<string> {
  const joined = Array.isArray(value) ? value.join(',') : value;
  return new Set(
    joined
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
}
