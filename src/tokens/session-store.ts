import { randomBytes } from 'node:crypto';
import type { Informer } from '../cluster/informer.ts';
import type { Logger } from '../observability/logger.ts';
import { ConflictError, type IamApi } from '../users/iam-api.ts';
import { userLabelKey, type SessionObject } from '../users/iam-resources.ts';
import { InformerIndex } from '../cluster/informer-index.ts';
import { ReadThroughCache } from '../cluster/read-through.ts';
import { parsedTimes, type SessionTimes } from './session-limit.ts';

export interface NewSession {
  /** From newSessionId(): named before the tokens that carry it are signed. */
  sessionId: string;
  username: string;
  userUID: string;
  clientId: string;
  refreshTokenId: string;
  expiresAtSeconds: number;
  sourceAddress?: string;
}

export type RotateOutcome =
  | { outcome: 'rotated'; session: SessionObject }
  /**
   * The presented refresh token was redeemed moments ago (within the grace window): a retry or a race
   * between replicas. The session is unchanged; the caller answers with its current refresh token.
   */
  | { outcome: 'repeated'; session: SessionObject }
  /** The presented refresh token was already redeemed: the session has been revoked. */
  | { outcome: 'reused' }
  | { outcome: 'gone' };

const CAS_ATTEMPTS = 5;

/**
 * How a token's session incarnation (its `sinc` claim) stands to the session as this replica has it:
 * `current` — the token belongs to the login that holds the session; `ended` — to a login whose session a
 * later login took over; `newer` — the session here is behind a takeover made elsewhere (read it again).
 * A session without an incarnation (written before it existed, or by a CRD that drops it) is never taken
 * over: every token of it is current, as before.
 */
export type IncarnationStanding = 'current' | 'ended' | 'newer';

export function standingOf(session: SessionObject, sinc: number | undefined): IncarnationStanding {
  const held = session.spec.incarnation;
  if (held === undefined) return 'current';
  if (sinc === undefined || sinc < held) return 'ended';
  return sinc === held ? 'current' : 'newer';
}

/** What names one login's hold of a session: the session and the incarnation its tokens carry. */
export interface SessionRef {
  sid: string;
  sinc?: number | undefined;
}

/** 128 random bits in hex: a valid object name, never reused. */
export function newSessionId(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Sessions as custom resources: created at login, rotated by refresh with compare-and-swap on
 * resourceVersion, deleted by logout, revocation, reuse detection and expiry. Reads for bearer tokens
 * come from the watch-backed cache; a session another replica created a moment ago is read through.
 */
export class SessionStore {
  readonly #api: IamApi;
  readonly #informer: Informer<SessionObject>;
  readonly #cache: ReadThroughCache<SessionObject>;
  readonly #logger: Logger;
  readonly #nowMs: () => number;
  readonly #graceMs: number;
  // Parsed once per session object: every API request asks whether its session has expired.
  readonly #times = new WeakMap<SessionObject, SessionTimes>();
  /** The cached sessions by user: a login looks at its user's sessions, not at every user's. */
  readonly #byUser: InformerIndex<SessionObject>;
  readonly #deleting = new Map<string, Promise<boolean>>();
  /** Sessions this replica is taking over right now: no other login of it takes or deletes them meanwhile. */
  readonly #takingOver = new Set<string>();

  constructor(deps: {
    api: IamApi;
    informer: Informer<SessionObject>;
    logger: Logger;
    /** How long a just-redeemed refresh token may be repeated without counting as reuse (0: never). */
    refreshGraceSeconds?: number;
    nowMs?: () => number;
  }) {
    this.#graceMs = (deps.refreshGraceSeconds ?? 0) * 1000;
    this.#api = deps.api;
    this.#informer = deps.informer;
    this.#logger = deps.logger;
    this.#nowMs = deps.nowMs ?? Date.now;
    this.#byUser = new InformerIndex(
      deps.informer,
      (session) => session.spec.username,
      (session) => session.metadata.name,
    );
    this.#cache = new ReadThroughCache<SessionObject>({
      cache: deps.informer,
      fetch: (name) => this.#api.get<SessionObject>('sessions', name),
      positiveTtlMs: 2000,
      // Session names are never reused, so "gone" stays true; the TTL only bounds memory churn.
      negativeTtlMs: 60_000,
      maxEntries: 50_000,
      nowMs: this.#nowMs,
    });
  }

  close(): void {
    this.#cache.close();
    this.#byUser.close();
  }

  get count(): number {
    return this.#informer.size;
  }

  /** A new session, incarnation 1: the tokens of `s` carry `sinc: 1`. */
  async create(s: NewSession): Promise<SessionObject> {
    const labelValue = /^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/.test(s.username) ? s.username : undefined;
    const body: SessionObject = {
      apiVersion: `${this.#api.iam.group}/${this.#api.iam.version}`,
      kind: 'Session',
      metadata: {
        name: s.sessionId,
        ...(labelValue ? { labels: { [userLabelKey(this.#api.iam)]: labelValue } } : {}),
      },
      spec: specOf(s, 1),
    };
    const created = await this.#api.create('sessions', body);
    this.#cache.remember(created);
    return created;
  }

  /**
   * Whether a login of the session's user may take it over instead of creating a session and deleting
   * this one: it has an incarnation (so its tokens can be told from the new login's), and no other login
   * on this replica is taking it over or deleting it.
   */
  canTakeOver(session: SessionObject): boolean {
    const name = session.metadata.name;
    return session.spec.incarnation !== undefined && !this.#takingOver.has(name) && !this.#deleting.has(name);
  }

  /** Whether a login on this replica is taking the session over right now (it must not be deleted). */
  isTakenOver(sessionId: string): boolean {
    return this.#takingOver.has(sessionId);
  }

  /**
   * Gives `session` to a new login of its user (`s.sessionId` is its name): one write where ending it and
   * creating another took two, at every login at the session limit. Compare-and-swap on the version this
   * replica saw: undefined when a refresh or another replica's takeover got there first, or the session is
   * gone (the caller opens a new session instead). The new incarnation ends every token of the old login:
   * each carries the old number.
   */
  async takeOver(session: SessionObject, s: NewSession): Promise<SessionObject | undefined> {
    const name = session.metadata.name;
    const incarnation = session.spec.incarnation;
    if (incarnation === undefined || name !== s.sessionId || this.#takingOver.has(name))
      throw new Error(`session ${name} cannot be taken over`);
    this.#takingOver.add(name);
    try {
      const body: SessionObject = {
        ...session,
        metadata: { ...session.metadata },
        spec: specOf(s, incarnation + 1),
      };
      const updated = await this.#api.replace('sessions', body);
      this.#cache.remember(updated);
      return updated;
    } catch (err) {
      if (err instanceof ConflictError || isNotFound(err)) return undefined;
      throw err;
    } finally {
      this.#takingOver.delete(name);
    }
  }

  /** The session if it is in memory and has not expired; undefined when `get` must be asked. */
  peek(sessionId: string): SessionObject | undefined {
    const session = this.#cache.peek(sessionId);
    return session && !this.isExpired(session) ? session : undefined;
  }

  /** For a bearer token: no I/O unless neither the cache nor the side cache knows the session. */
  async get(sessionId: string): Promise<SessionObject | undefined> {
    const session = this.#cache.peek(sessionId) ?? (await this.#cache.get(sessionId));
    return session && !this.isExpired(session) ? session : undefined;
  }

  /**
   * The session while the login a token belongs to holds it: undefined when it is gone, expired or taken
   * over by a later login. Read again from the apiserver only when the token is newer than the session
   * this replica has (a takeover its watch has not shown yet): a token of an ended login costs no I/O.
   */
  async getHeld(ref: SessionRef): Promise<SessionObject | undefined> {
    const session = await this.#held(ref);
    return session && !this.isExpired(session) ? session : undefined;
  }

  /** As getHeld, without the expiry: undefined when gone or taken over. */
  async #held(ref: SessionRef): Promise<SessionObject | undefined> {
    let session = await this.#cache.get(ref.sid);
    if (session && standingOf(session, ref.sinc) === 'newer') session = await this.#cache.getFresh(ref.sid);
    return session && standingOf(session, ref.sinc) === 'current' ? session : undefined;
  }

  isExpired(session: SessionObject): boolean {
    return this.timesOf(session).expiresAtMs <= this.#nowMs();
  }

  /**
   * When the session's refresh token expires and when it was created (unreadable: 0, the oldest), read
   * once per cached object: each login at the session limit compares all of its user's sessions.
   */
  timesOf(session: SessionObject): SessionTimes {
    let times = this.#times.get(session);
    if (!times) {
      times = parsedTimes(session);
      this.#times.set(session, times);
    }
    return times;
  }

  /**
   * Redeems refresh token `presentedTokenId`: swaps in `next` if it is still the session's current one.
   * Any other refresh token of the session has been redeemed before, so the session is revoked.
   */
  async rotate(
    ref: SessionRef,
    presentedTokenId: string,
    next: { refreshTokenId: string; expiresAtSeconds: number },
  ): Promise<RotateOutcome> {
    const sessionId = ref.sid;
    let current = await this.#cache.get(sessionId);
    for (let attempt = 1; current && !this.isExpired(current); attempt++) {
      if (current.spec.refreshTokenId !== presentedTokenId || standingOf(current, ref.sinc) !== 'current') {
        // The cache may be behind a rotation (or takeover) another replica made: only a fresh read can call
        // it reuse.
        current = await this.#cache.getFresh(sessionId);
        if (!current) break;
        // A later login took the session over: the token's login has ended, and that is no reuse (the
        // session is the new login's, not to be revoked).
        if (standingOf(current, ref.sinc) !== 'current') break;
        if (current.spec.refreshTokenId !== presentedTokenId) {
          if (this.#isGraceRepeat(current, presentedTokenId))
            return { outcome: 'repeated', session: current };
          await this.delete(sessionId);
          this.#logger.warn('refresh token reused: session revoked', {
            session: sessionId,
            user: current.spec.username,
          });
          return { outcome: 'reused' };
        }
      }
      const body: SessionObject = {
        ...current,
        spec: {
          ...current.spec,
          refreshTokenId: next.refreshTokenId,
          expiresAt: new Date(next.expiresAtSeconds * 1000).toISOString(),
          previousRefreshTokenId: presentedTokenId,
          rotatedAt: new Date(this.#nowMs()).toISOString(),
        },
      };
      try {
        const updated = await this.#api.replace('sessions', body);
        this.#cache.remember(updated);
        return { outcome: 'rotated', session: updated };
      } catch (err) {
        if (err instanceof ConflictError && attempt < CAS_ATTEMPTS) {
          current = await this.#cache.getFresh(sessionId);
          continue;
        }
        if (isNotFound(err)) break;
        throw err;
      }
    }
    return { outcome: 'gone' };
  }

  /** The token redeemed last, repeated within the grace window (judged on a fresh read only). */
  #isGraceRepeat(session: SessionObject, presentedTokenId: string): boolean {
    const { previousRefreshTokenId, rotatedAt } = session.spec;
    if (this.#graceMs <= 0 || previousRefreshTokenId !== presentedTokenId || !rotatedAt) return false;
    const sinceMs = this.#nowMs() - Date.parse(rotatedAt);
    return sinceMs >= -this.#graceMs && sinceMs <= this.#graceMs;
  }

  /**
   * Ends the session of a login (logout, revocation); true if this call ended it. A session a later login
   * has taken over is that login's: it stays.
   */
  async end(ref: SessionRef): Promise<boolean> {
    const held = await this.#held(ref);
    // Gone from every view: the delete answers whether it still existed (a session created a moment ago on
    // another replica, not read through yet, is still ended).
    if (!held && this.#cache.peek(ref.sid)) return false;
    return this.delete(ref.sid);
  }

  /**
   * Ends a session; true if this call ended it. Every replica's cache drops it when the watch delivers the
   * deletion. Concurrent calls for one session share one request: logins of one user at the session limit
   * all pick the same oldest sessions to end.
   */
  delete(sessionId: string): Promise<boolean> {
    const pending = this.#deleting.get(sessionId);
    if (pending) return pending.then(() => false);
    const deleting = this.#api
      .delete('sessions', sessionId)
      .then((existed) => {
        this.#cache.forget(sessionId);
        return existed;
      })
      .finally(() => this.#deleting.delete(sessionId));
    this.#deleting.set(sessionId, deleting);
    return deleting;
  }

  /** The user's sessions as this replica's cache knows them (asked at every login: read from the index). */
  sessionsOf(username: string): SessionObject[] {
    // What this replica wrote and its watch has not shown yet stands in for the indexed copy: a session it
    // took over a moment ago is the newest, not still the least recently used (the next login would pick
    // it again and lose a compare-and-swap, then create one).
    return this.#byUser.get(username).map((session) => this.#cache.unseen(session.metadata.name) ?? session);
  }

  /**
   * The user's sessions as the apiserver has them now (a linearizable list by the user label), with
   * those this replica's cache knows: a session opened a moment ago on any replica is included.
   */
  async currentSessionsOf(username: string): Promise<SessionObject[]> {
    const listed = await this.#api.list<SessionObject>(
      'sessions',
      `${userLabelKey(this.#api.iam)}=${username}`,
    );
    const found = new Map(this.sessionsOf(username).map((s) => [s.metadata.name, s]));
    for (const session of listed)
      if (session.spec.username === username) found.set(session.metadata.name, session);
    return [...found.values()];
  }

  /** Deletes sessions whose refresh token has expired. Every replica sweeps; deleting twice is harmless. */
  async sweepExpired(): Promise<number> {
    let deleted = 0;
    for (const session of this.#informer.list()) {
      if (!this.isExpired(session)) continue;
      if (await this.delete(session.metadata.name)) deleted++;
    }
    return deleted;
  }
}

function isNotFound(err: unknown): boolean {
  return (err as { code?: unknown })?.code === 404;
}

function specOf(s: NewSession, incarnation: number): SessionObject['spec'] {
  return {
    username: s.username,
    userUID: s.userUID,
    clientId: s.clientId,
    refreshTokenId: s.refreshTokenId,
    expiresAt: new Date(s.expiresAtSeconds * 1000).toISOString(),
    incarnation,
    ...(s.sourceAddress ? { sourceAddress: s.sourceAddress } : {}),
  };
}
