import type { BearerOutcome } from './auth-metrics.ts';
import { AUTHENTICATED_GROUP, type Identity } from '../kernel/identity.ts';
import { stateOf, type SessionObject, type UserObject } from '../users/iam-resources.ts';
import { standingOf, type SessionStore } from './session-store.ts';
import { TokenError, type TokenClaims, type TokenService } from './tokens.ts';
import type { UserStore } from '../users/user-store.ts';

/** Why a bearer token was refused; `message` is safe to return to the caller. */
export class BearerError extends Error {
  readonly outcome: Exclude<BearerOutcome, 'success'>;
  constructor(outcome: Exclude<BearerOutcome, 'success'>, message: string) {
    super(message);
    this.name = 'BearerError';
    this.outcome = outcome;
  }
}

/**
 * Access token → identity. Signature and claims are checked in memory; the session and the user come
 * from watch-backed caches, so a request costs no cluster call (a session created a moment ago on another
 * replica is read through once). Groups are the user's current ones, not a copy frozen into the token.
 */
export class AccessTokenAuthenticator {
  readonly #tokens: TokenService;
  readonly #users: UserStore;
  readonly #sessions: SessionStore;
  // One identity per user object and session, shared by their requests: a changed user is a new object.
  readonly #identities = new WeakMap<UserObject, WeakMap<SessionObject, Identity>>();

  constructor(deps: { tokens: TokenService; users: UserStore; sessions: SessionStore }) {
    this.#tokens = deps.tokens;
    this.#users = deps.users;
    this.#sessions = deps.sessions;
  }

  async authenticate(token: string): Promise<Identity> {
    return this.identify(token);
  }

  /**
   * As authenticate, but the identity comes at once when the session and the user are in memory, as for
   * nearly every request: the bearer door then lets the request in without a promise. Throws BearerError.
   */
  identify(token: string): Identity | Promise<Identity> {
    const claims = this.#claimsOf(token);
    const session = this.#sessions.peek(claims.sid);
    const standing = session && standingOf(session, claims.sinc);
    // A later login took the session over: this token's login has ended.
    if (standing === 'ended') throw new BearerError('revoked', 'session has ended');
    const user = standing === 'current' && this.#users.peek(claims.username);
    return user ? this.#admit(user, session!) : this.#readThenAdmit(claims);
  }

  #claimsOf(token: string): TokenClaims {
    try {
      return this.#tokens.verify(token, 'access');
    } catch (err) {
      if (err instanceof TokenError && err.failure === 'expired')
        throw new BearerError('expired', err.message);
      throw new BearerError('invalid', err instanceof TokenError ? err.message : 'invalid token');
    }
  }

  async #readThenAdmit(claims: TokenClaims): Promise<Identity> {
    const session = await this.#sessions.getHeld(claims);
    if (!session) throw new BearerError('revoked', 'session has ended');
    const user = this.#users.peek(claims.username) ?? (await this.#users.get(claims.username));
    return this.#admit(user, session);
  }

  #admit(user: UserObject | undefined, session: SessionObject): Identity {
    if (!user || user.metadata.uid !== session.spec.userUID)
      throw new BearerError('user_inactive', 'user no longer exists');
    if (stateOf(user) === 'Disabled') throw new BearerError('user_inactive', 'account is disabled');
    return this.#identityOf(user, session);
  }

  #identityOf(user: UserObject, session: SessionObject): Identity {
    let bySession = this.#identities.get(user);
    if (!bySession) {
      bySession = new WeakMap();
      this.#identities.set(user, bySession);
    }
    let identity = bySession.get(session);
    if (!identity) {
      const groups = Object.freeze([...new Set([...(user.spec?.groups ?? []), AUTHENTICATED_GROUP])]);
      const incarnation = session.spec.incarnation;
      identity = Object.freeze({
        username: user.metadata.name,
        groups,
        sessionId: session.metadata.name,
        ...(incarnation !== undefined ? { sessionIncarnation: incarnation } : {}),
      });
      bySession.set(session, identity);
    }
    return identity;
  }
}
