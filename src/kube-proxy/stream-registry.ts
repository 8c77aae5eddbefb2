/**
 * Open proxied connections (watches, long responses, exec/attach/port-forward, WebSocket watches) by
 * the session and user they were opened for, so that they end when the session ends: a connection is
 * authenticated once, when it opens, and must not outlive what authenticated it.
 */

import type {
  LiveSession,
  SessionEndReason,
  SessionListener,
  SessionOwner,
} from '../kernel/session-signals.ts';

export type StreamEndReason = SessionEndReason;
export type StreamOwner = SessionOwner;

/**
 * Looks the owner's session up as authentication would (cache only in practice): undefined when the
 * session has ended or expired, or the user is gone or disabled.
 */
export type SessionLookup = (owner: StreamOwner) => Promise<LiveSession | undefined>;

export interface StreamRegistryOptions {
  lookup: SessionLookup;
  /** Called once per ended connection (metrics). */
  onEnded?: (reason: StreamEndReason) => void;
  /** Lookup failures are not fatal: the connection stays, the session's events still end it. */
  onLookupError?: (err: unknown) => void;
  nowMs?: () => number;
}

interface Connection {
  owner: StreamOwner;
  end: (reason: StreamEndReason) => void;
}

interface SessionEntry {
  connections: Set<Connection>;
  expiresAtMs: number | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** setTimeout's longest delay; longer expiries are re-checked when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Timers may fire a little before Date.now() reaches the deadline; aim just past it. */
const TIMER_MARGIN_MS = 5;

export class StreamRegistry implements SessionListener {
  readonly #lookup: SessionLookup;
  readonly #onEnded: (reason: StreamEndReason) => void;
  readonly #onLookupError: (err: unknown) => void;
  readonly #nowMs: () => number;
  readonly #bySession = new Map<string, SessionEntry>();
  readonly #byUser = new Map<string, Set<Connection>>();
  #closed = false;

  constructor(options: StreamRegistryOptions) {
    this.#lookup = options.lookup;
    this.#onEnded = options.onEnded ?? (() => {});
    this.#onLookupError = options.onLookupError ?? (() => {});
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /** Open connections tracked now. */
  get size(): number {
    let n = 0;
    for (const set of this.#byUser.values()) n += set.size;
    return n;
  }

  /**
   * Tracks a connection until the returned function is called (when it closes by itself). `end` is
   * called at most once, when the owner's session or user ends. The session is looked up again here:
   * it may have ended between the request's authentication and this call.
   */
  track(owner: StreamOwner, end: (reason: StreamEndReason) => void): () => void {
    let open = true;
    const connection: Connection = {
      owner,
      end: (reason) => {
        if (!open) return;
        untrack();
        this.#onEnded(reason);
        end(reason);
      },
    };
    const untrack = () => {
      if (!open) return;
      open = false;
      this.#remove(connection);
    };
    if (this.#closed) return untrack;

    let users = this.#byUser.get(owner.username);
    if (!users) this.#byUser.set(owner.username, (users = new Set()));
    users.add(connection);
    if (owner.sessionId !== undefined) {
      let entry = this.#bySession.get(owner.sessionId);
      if (!entry) {
        entry = { connections: new Set(), expiresAtMs: undefined, timer: undefined };
        this.#bySession.set(owner.sessionId, entry);
      }
      entry.connections.add(connection);
    }
    this.#lookup(owner).then(
      (live) => {
        if (!open) return;
        if (!live) connection.end('session_ended');
        else if (owner.sessionId !== undefined) this.sessionExpiry(owner.sessionId, live.expiresAtMs);
      },
      (err: unknown) => this.#onLookupError(err),
    );
    return untrack;
  }

  /** The session ended (logout, revocation, refresh-token reuse, sweep): ends its connections. */
  endSession(sessionId: string, reason: StreamEndReason = 'session_ended'): void {
    const entry = this.#bySession.get(sessionId);
    if (!entry) return;
    for (const connection of [...entry.connections]) connection.end(reason);
  }

  /** The user was disabled or deleted: ends every connection of theirs, whatever the session. */
  endUser(username: string, reason: 'user_disabled' | 'user_deleted'): void {
    const connections = this.#byUser.get(username);
    if (!connections) return;
    for (const connection of [...connections]) connection.end(reason);
  }

  /** The session now expires at `expiresAtMs` (a refresh moved it): (re)arms its timer. */
  sessionExpiry(sessionId: string, expiresAtMs: number): void {
    const entry = this.#bySession.get(sessionId);
    if (!entry || this.#closed) return;
    if (entry.expiresAtMs === expiresAtMs && entry.timer) return;
    entry.expiresAtMs = expiresAtMs;
    clearTimeout(entry.timer);
    const delayMs = Math.min(MAX_TIMER_MS, Math.max(0, expiresAtMs - this.#nowMs()) + TIMER_MARGIN_MS);
    entry.timer = setTimeout(() => this.#expiryDue(sessionId, entry), delayMs);
    entry.timer.unref();
  }

  /** Stops every timer; tracked connections are left to the server's own shutdown. */
  close(): void {
    this.#closed = true;
    for (const entry of this.#bySession.values()) clearTimeout(entry.timer);
  }

  #expiryDue(sessionId: string, entry: SessionEntry): void {
    entry.timer = undefined;
    const first = entry.connections.values().next().value;
    if (!first || this.#bySession.get(sessionId) !== entry) return;
    // Asked again rather than trusted: a refresh may have moved the expiry meanwhile.
    this.#lookup(first.owner).then(
      (live) => {
        if (!live || live.expiresAtMs <= this.#nowMs()) this.endSession(sessionId, 'session_expired');
        else this.sessionExpiry(sessionId, live.expiresAtMs);
      },
      (err: unknown) => {
        this.#onLookupError(err);
        // Without an answer the recorded expiry decides.
        if ((entry.expiresAtMs ?? Infinity) <= this.#nowMs()) this.endSession(sessionId, 'session_expired');
      },
    );
  }

  #remove(connection: Connection): void {
    const { username, sessionId } = connection.owner;
    const users = this.#byUser.get(username);
    users?.delete(connection);
    if (users?.size === 0) this.#byUser.delete(username);
    if (sessionId === undefined) return;
    const entry = this.#bySession.get(sessionId);
    if (!entry) return;
    entry.connections.delete(connection);
    if (entry.connections.size === 0) {
      clearTimeout(entry.timer);
      this.#bySession.delete(sessionId);
    }
  }
}
