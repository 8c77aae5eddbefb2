import { serviceRef } from './module.ts';

/** Who a long-lived connection was opened for (a subset of Identity). */
export interface SessionOwner {
  username: string;
  sessionId?: string;
  sessionIncarnation?: number;
}

/** What is known of a live session: when it expires (Unix ms). */
export interface LiveSession {
  expiresAtMs: number;
}

/** Why a session's connections must end; a bounded metric label. */
export type SessionEndReason = 'session_ended' | 'session_expired' | 'user_disabled' | 'user_deleted';

/** Told whenever a session or user changes in a way that matters to open connections. */
export interface SessionListener {
  /**
   * The session was deleted (logout, revocation, refresh-token reuse, single-session login, sweep) or
   * taken over by a later login at the session limit.
   */
  endSession(sessionId: string, reason: 'session_ended'): void;
  /** The user was disabled or deleted: every session of theirs is over. */
  endUser(username: string, reason: 'user_disabled' | 'user_deleted'): void;
  /** The session now expires at this time (a refresh moved it). */
  sessionExpiry(sessionId: string, expiresAtMs: number): void;
}

/**
 * Session and user changes as every replica sees them (from the watch on Sessions and Users), for
 * features that hold connections open past their authentication: the Kubernetes API proxy's watches
 * and upgrades end with their session.
 */
export interface SessionSignals {
  /** The owner's session as bearer authentication would judge it now; undefined when it is over. */
  lookup(owner: SessionOwner): Promise<LiveSession | undefined>;
  /** Starts telling `listener` about changes; returns the unsubscribe. */
  subscribe(listener: SessionListener): () => void;
}

/** Provided by the module that owns sessions (tokens). */
export const sessionSignalsRef = serviceRef<SessionSignals>('session-signals');
