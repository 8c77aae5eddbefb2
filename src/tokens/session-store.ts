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

  async create(s: NewSession): Promise<SessionObject> {
    const labelValue = /^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$/.test(s.username) ? s.username : undefined;
    const body: SessionObject = {
      apiVersion: `${this.#api.iam.group}/${this.#api.iam.version}`,
      kind: 'Session',
      metadata: {
        name: s.sessionId,
        ...(labelValue ? { labels: { [userLabelKey(this.#api.iam)]: labelValue } } : {}),
      },
      spec: {
        username: s.username,
        userUID: s.userUID,
        clientId: s.clientId,
        refreshTokenId: s.refreshTokenId,
        expiresAt: new Date(s.expiresAtSeconds * 1000).toISOString(),
        ...(s.sourceAddress ? { sourceAddress: s.sourceAddress } : {}),
      },
    };
    const created = await this.#api.create('sessions', body);
    this.#cache.remember(created);
    return created;
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
    sessionId: string,
    presentedTokenId: string,
    next: { refreshTokenId: string; expiresAtSeconds: number },
  ): Promise<RotateOutcome> {
    let current = await this.#cache.get(sessionId);
    for (let attempt = 1; current && !this.isExpired(current); attempt++) {
      if (current.spec.refreshTokenId !== presentedTokenId) {
        // The cache may be behind a rotation another replica made: only a fresh read can call it reuse.
        current = await this.#cache.getFresh(sessionId);
        if (!current) break;
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
    return this.#byUser.get(username);
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
