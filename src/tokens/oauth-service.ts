import type { Logger } from '../observability/logger.ts';
import type { AuthMetrics } from './auth-metrics.ts';
import { stateOf, type UserObject } from './iam-resources.ts';
import { lockoutOf } from './lockout.ts';
import { oauthError } from './oauth-request.ts';
import type { PasswordCheck } from './password-gate.ts';
import { newSessionId, type SessionStore } from './session-store.ts';
import { TokenError, type TokenClaims, type TokenService, type TokenType } from './tokens.ts';
import type { UserStore } from './user-store.ts';

/** RFC 6749 §5.1 success body. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  refresh_token: string;
  expires_in: number;
}

export interface LoginAttempt {
  clientId: string;
  login: string;
  password: string;
  sourceAddress: string | undefined;
}

/** One message for unknown user and wrong password, so answers do not reveal which accounts exist. */
const BAD_CREDENTIALS = 'invalid username or password';

/**
 * The grants and session endings of the token service. Routes parse and authenticate the client; this
 * decides. Every decision about a login is logged (user, client, address, outcome) — never a secret.
 */
export class OAuthService {
  readonly #tokens: TokenService;
  readonly #users: UserStore;
  readonly #sessions: SessionStore;
  readonly #passwords: PasswordCheck;
  readonly #singleSession: boolean;
  readonly #logger: Logger;
  readonly #metrics: AuthMetrics;
  readonly #nowMs: () => number;

  constructor(deps: {
    tokens: TokenService;
    users: UserStore;
    sessions: SessionStore;
    passwords: PasswordCheck;
    singleSession: boolean;
    logger: Logger;
    metrics: AuthMetrics;
    nowMs?: () => number;
  }) {
    this.#tokens = deps.tokens;
    this.#users = deps.users;
    this.#sessions = deps.sessions;
    this.#passwords = deps.passwords;
    this.#singleSession = deps.singleSession;
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
    this.#nowMs = deps.nowMs ?? Date.now;
  }

  async passwordGrant(attempt: LoginAttempt): Promise<TokenResponse> {
    const log = (outcome: string, reason: string, user?: UserObject) =>
      this.#logger[outcome === 'success' ? 'info' : 'warn']('login', {
        outcome,
        reason,
        user: user?.metadata.name ?? attempt.login.slice(0, 64),
        knownUser: user !== undefined,
        client: attempt.clientId,
        sourceAddress: attempt.sourceAddress,
      });

    const user = await this.#users.findForLogin(attempt.login);
    // A locked account is refused before its password is checked: guessing stops for the whole window.
    const lock = lockoutOf(user?.status, this.#nowMs());
    if (lock.locked) {
      log('locked', 'account locked after too many failed logins', user);
      throw oauthError(
        'TooManyRequests',
        'invalid_grant',
        `too many failed logins for this account; retry after ${lock.retryAfterSeconds} s`,
        { retryAfterSeconds: lock.retryAfterSeconds },
      );
    }

    const stopTimer = this.#metrics.passwordVerifySeconds.startTimer();
    const matches = await this.#passwords.verify(attempt.password, user?.spec?.password);
    stopTimer();
    if (!user || !matches) {
      // Not awaited: a known user's answer must not take a cluster round trip longer than an unknown one's.
      // The count itself is exact (compare-and-swap on the User), it only lands a few milliseconds later.
      if (user) this.#countFailure(user, attempt.sourceAddress);
      log('failure', user ? 'wrong password' : 'unknown user', user);
      throw oauthError('BadRequest', 'invalid_grant', BAD_CREDENTIALS);
    }
    if (stateOf(user) === 'Disabled') {
      log('failure', 'account disabled', user);
      throw oauthError('BadRequest', 'invalid_grant', 'account is disabled');
    }

    const response = await this.#openSession(user, attempt);
    log('success', 'authenticated', user);
    // Bookkeeping must not fail a login that succeeded; a lost lastLoginTime is only logged.
    this.#users.recordSuccess(user).catch((err: unknown) => {
      this.#logger.warn('could not record login on user status', {
        user: user.metadata.name,
        error: String(err),
      });
    });
    return response;
  }

  #countFailure(user: UserObject, sourceAddress: string | undefined): void {
    this.#users.recordFailure(user).then(
      ({ lockedNow }) => {
        if (!lockedNow) return;
        this.#metrics.lockouts.inc();
        this.#logger.warn('account locked', { user: user.metadata.name, sourceAddress });
      },
      (err: unknown) =>
        this.#logger.error('could not count a failed login', {
          user: user.metadata.name,
          error: String(err),
        }),
    );
  }

  async #openSession(user: UserObject, attempt: LoginAttempt): Promise<TokenResponse> {
    const username = user.metadata.name;
    const previous = this.#singleSession ? this.#sessions.sessionsOf(username) : [];
    const sessionId = newSessionId();
    const issued = this.#tokens.issue({ username, clientId: attempt.clientId, sessionId });
    await this.#sessions.create({
      sessionId,
      username,
      userUID: user.metadata.uid ?? '',
      clientId: attempt.clientId,
      refreshTokenId: issued.refreshTokenId,
      expiresAtSeconds: issued.refreshExpiresAtSeconds,
      ...(attempt.sourceAddress ? { sourceAddress: attempt.sourceAddress } : {}),
    });
    for (const old of previous) {
      if (await this.#sessions.delete(old.metadata.name))
        this.#metrics.sessionsEnded.inc({ reason: 'single_session' });
    }
    return tokenResponse(issued);
  }

  async refreshGrant(clientId: string, refreshToken: string): Promise<TokenResponse> {
    const claims = this.#verifyForGrant(refreshToken, 'refresh');
    if (claims.aud !== clientId) {
      throw oauthError('BadRequest', 'invalid_grant', 'refresh token was issued to another client');
    }
    const user = await this.#users.get(claims.username);
    const session = await this.#sessions.get(claims.sid);
    if (!session) throw oauthError('BadRequest', 'invalid_grant', 'refresh token is revoked or expired');
    if (!user || user.metadata.uid !== session.spec.userUID || stateOf(user) === 'Disabled') {
      await this.#sessions.delete(claims.sid);
      this.#logger.warn('refresh refused: user deleted or disabled', {
        user: claims.username,
        session: claims.sid,
      });
      throw oauthError('BadRequest', 'invalid_grant', 'refresh token is revoked or expired');
    }
    const issued = this.#tokens.issue({ username: claims.username, clientId, sessionId: claims.sid });
    const result = await this.#sessions.rotate(claims.sid, claims.jti, {
      refreshTokenId: issued.refreshTokenId,
      expiresAtSeconds: issued.refreshExpiresAtSeconds,
    });
    if (result.outcome === 'reused') {
      this.#metrics.sessionsEnded.inc({ reason: 'reuse' });
      throw oauthError(
        'BadRequest',
        'invalid_grant',
        'refresh token was already used; the session has been revoked',
      );
    }
    if (result.outcome === 'gone')
      throw oauthError('BadRequest', 'invalid_grant', 'refresh token is revoked or expired');
    this.#logger.info('token refreshed', { user: claims.username, client: clientId, session: claims.sid });
    return tokenResponse(issued);
  }

  /**
   * RFC 7009: ends the session of an access or refresh token issued to `clientId`. Tokens that are not
   * ours, or already dead, are not an error. Expiry is ignored: an expired access token still ends a
   * session whose refresh token lives.
   */
  async revoke(clientId: string, token: string, hint: string | undefined): Promise<void> {
    const order: TokenType[] = hint === 'refresh_token' ? ['refresh', 'access'] : ['access', 'refresh'];
    let claims: TokenClaims | undefined;
    for (const type of order) {
      try {
        claims = this.#tokens.verify(token, type, { ignoreExpiration: true });
        break;
      } catch {
        /* try the other type; unverifiable tokens are silently ignored (RFC 7009 §2.2) */
      }
    }
    if (!claims) return;
    if (claims.aud !== clientId)
      throw oauthError('BadRequest', 'unauthorized_client', 'token was issued to another client');
    if (await this.#sessions.delete(claims.sid)) {
      this.#metrics.sessionsEnded.inc({ reason: 'revoke' });
      this.#logger.info('session revoked', { user: claims.username, client: clientId, session: claims.sid });
    }
  }

  /** Ends the session of a (possibly expired) access token presented as `Authorization: Bearer`. */
  async logout(accessToken: string): Promise<void> {
    let claims: TokenClaims;
    try {
      claims = this.#tokens.verify(accessToken, 'access', { ignoreExpiration: true });
    } catch (err) {
      const reason = err instanceof TokenError ? err.message : 'invalid token';
      throw oauthError('Unauthorized', 'invalid_token', reason, {
        challenge: `Bearer error="invalid_token"`,
      });
    }
    if (await this.#sessions.delete(claims.sid)) {
      this.#metrics.sessionsEnded.inc({ reason: 'logout' });
      this.#logger.info('logout', { user: claims.username, session: claims.sid });
    }
  }

  #verifyForGrant(token: string, type: TokenType): TokenClaims {
    try {
      return this.#tokens.verify(token, type);
    } catch (err) {
      const reason = err instanceof TokenError ? err.message : 'invalid token';
      throw oauthError('BadRequest', 'invalid_grant', `${type} token is invalid: ${reason}`);
    }
  }
}

function tokenResponse(issued: {
  accessToken: string;
  refreshToken: string;
  accessExpiresInSeconds: number;
}) {
  return {
    access_token: issued.accessToken,
    token_type: 'Bearer' as const,
    refresh_token: issued.refreshToken,
    expires_in: issued.accessExpiresInSeconds,
  };
}
