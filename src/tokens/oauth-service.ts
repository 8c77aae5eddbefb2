import type { Logger } from '../observability/logger.ts';
import type { AuthMetrics } from './auth-metrics.ts';
import type { Settlement } from '../users/attempt-ledger.ts';
import type { LoginRecordWriter } from '../users/login-records.ts';
import { stateOf, type SessionObject, type UserObject } from '../users/iam-resources.ts';
import {
  LedgerContendedError,
  type LedgerStore,
  type LoginAdmission,
  type Reservation,
} from '../users/login-admission.ts';
import { lockoutOf, type LockoutPolicy } from '../users/lockout.ts';
import { oauthError } from './oauth-request.ts';
import type { PasswordCheck } from './password-gate.ts';
import { newSessionId, type NewSession, type SessionStore } from './session-store.ts';
import { sessionsBeyondLimit } from './session-limit.ts';
import {
  TokenError,
  type IssuedTokens,
  type TokenClaims,
  type TokenService,
  type TokenType,
} from './tokens.ts';
import type { UserStore } from '../users/user-store.ts';

type AdmittedReservation = Extract<Reservation, { admitted: true }>;
/** The login's log line: outcome, reason and the user, with the attempt's client and source address. */
type LoginLog = (outcome: string, reason: string, user?: UserObject, extra?: Record<string, unknown>) => void;

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
  userAgent?: string | undefined;
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
  readonly #sessionLimit: number;
  readonly #logger: Logger;
  readonly #metrics: AuthMetrics;
  readonly #nowMs: () => number;
  readonly #admission: LoginAdmission;
  readonly #unknownNames: LedgerStore;
  readonly #policy: LockoutPolicy;
  readonly #records: LoginRecordWriter | undefined;

  constructor(deps: {
    tokens: TokenService;
    users: UserStore;
    sessions: SessionStore;
    passwords: PasswordCheck;
    singleSession: boolean;
    /** Sessions one user may hold at once (session-limit.ts); 0: no limit. */
    sessionLimit: number;
    logger: Logger;
    metrics: AuthMetrics;
    /** Admission control of password checks (docs/authentication.md, "Lockout"). */
    admission: LoginAdmission;
    /** Ledgers of names that are no user, so a lock does not reveal which names exist. */
    unknownNames: LedgerStore;
    policy: LockoutPolicy;
    /** The original's LoginRecord objects, for logins of known users (when that CRD exists). */
    records?: LoginRecordWriter;
    nowMs?: () => number;
  }) {
    this.#records = deps.records;
    this.#admission = deps.admission;
    this.#unknownNames = deps.unknownNames;
    this.#policy = deps.policy;
    this.#tokens = deps.tokens;
    this.#users = deps.users;
    this.#sessions = deps.sessions;
    this.#passwords = deps.passwords;
    this.#singleSession = deps.singleSession;
    this.#sessionLimit = deps.sessionLimit;
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
    this.#nowMs = deps.nowMs ?? Date.now;
  }

  async passwordGrant(attempt: LoginAttempt): Promise<TokenResponse> {
    const log: LoginLog = (outcome, reason, user, extra = {}) =>
      this.#logger[outcome === 'success' ? 'info' : 'warn']('login', {
        outcome,
        reason,
        ...extra,
        user: user?.metadata.name ?? attempt.login.slice(0, 64),
        knownUser: user !== undefined,
        client: attempt.clientId,
        sourceAddress: attempt.sourceAddress,
      });

    const user = await this.#users.findForLogin(attempt.login);
    // The login takes its place in the verification queue first: a storm beyond the queue is refused at
    // once, before anything is written for it.
    const leaveGate = this.#passwords.enter?.() ?? (() => {});
    let reservation: AdmittedReservation;
    try {
      reservation = await this.#reserve(user, attempt, log);
    } finally {
      // Given back in the same turn as `verify` below takes a slot or a queue place (or on a refusal).
      leaveGate();
    }
    const settle = (outcome: Settlement) => this.#settle(reservation.settle, outcome, user, attempt);

    let matches: boolean;
    const stopTimer = this.#metrics.passwordVerifySeconds.startTimer();
    try {
      matches = await this.#passwords.verify(attempt.password, user?.spec?.password);
    } catch (err) {
      // The password was never compared (the verifier failed): nothing to count.
      void settle('released');
      throw err;
    } finally {
      stopTimer();
    }
    if (!user || !matches) {
      // Settled before the answer: a guess sent after it meets the failure (or the lock it set), on any
      // replica, not a check still running. If the ledger cannot be written, the reservation still counts.
      await settle('failure');
      log('failure', user ? 'wrong password' : 'unknown user', user);
      // As the original: records only for existing users.
      if (user) this.#record(user, attempt, false, 'incorrect password');
      throw oauthError('BadRequest', 'invalid_grant', BAD_CREDENTIALS);
    }
    if (stateOf(user) === 'Disabled') {
      void settle('released');
      log('failure', 'account disabled', user);
      throw oauthError('BadRequest', 'invalid_grant', 'account is disabled');
    }
    void settle('success');

    const response = await this.#openSession(user, attempt);
    log('success', 'authenticated', user);
    this.#record(user, attempt, true, 'authenticated successfully');
    // Where status is part of the User (the original's CRD), the settlement above writes the login time.
    if (!this.#users.writesLoginTimeWithLedger)
      this.#users
        .recordSuccess(user)
        .catch((err: unknown) => this.#statusWriteFailed('last_login', user, err));
    return response;
  }

  /**
   * Reserves a password check in the shared ledger (the User's, or the unknown names' shard), to be settled
   * after it; throws the refusal when none may run.
   */
  async #reserve(
    user: UserObject | undefined,
    attempt: LoginAttempt,
    log: LoginLog,
  ): Promise<AdmittedReservation> {
    // Admission before the password is looked at: a check is reserved in the shared ledger (the User's,
    // or the unknown names' shard) and settled after. Known and unknown names take the same path, so
    // neither the answers nor their timing tell which names exist.
    const statusLock = lockoutOf(user?.status, this.#nowMs(), this.#policy);
    let reservation;
    try {
      reservation = statusLock.locked
        ? { admitted: false as const, retryAfterSeconds: statusLock.retryAfterSeconds }
        : await this.#admission.reserve(
            user ? this.#users.ledgers : this.#unknownNames,
            user ? user.metadata.name : attempt.login,
          );
    } catch (err) {
      // Fail closed: no reservation, no password check. Contention and an unwritable ledger (the
      // kube-apiserver away, the CRD missing) both answer 503, never a 500.
      const contended = err instanceof LedgerContendedError;
      this.#metrics.ledgerWriteFailures.inc({ step: 'reserve' });
      if (contended) log('unavailable', 'login ledger contended', user);
      else log('unavailable', 'login ledger cannot be written', user, { error: String(err) });
      throw oauthError(
        'Unavailable',
        'temporarily_unavailable',
        contended
          ? 'too many concurrent logins for this name; retry'
          : 'logins cannot be admitted right now; retry',
        { retryAfterSeconds: 1 },
      );
    }
    if (!reservation.admitted && reservation.checksRunning) {
      log('busy', 'password checks of this name already running', user);
      throw oauthError(
        'Unavailable',
        'temporarily_unavailable',
        `too many logins of this account are being checked; retry after ${reservation.retryAfterSeconds} s`,
        { retryAfterSeconds: reservation.retryAfterSeconds },
      );
    }
    if (!reservation.admitted) {
      log('locked', 'account locked after too many failed logins', user);
      throw oauthError(
        'TooManyRequests',
        'invalid_grant',
        `too many failed logins for this account; retry after ${reservation.retryAfterSeconds} s`,
        { retryAfterSeconds: reservation.retryAfterSeconds },
      );
    }
    return reservation;
  }

  /**
   * Settles a reservation, with the ledger's bounded retries; never rejects, so a caller may leave it to run
   * in the background. If it still fails, the reservation stays and counts as a failure when its lease
   * ends: a failure is never dropped.
   */
  #settle(
    settle: (outcome: Settlement) => Promise<{ lockedNow: boolean }>,
    outcome: Settlement,
    user: UserObject | undefined,
    attempt: LoginAttempt,
  ): Promise<void> {
    return settle(outcome).then(
      ({ lockedNow }) => {
        if (!lockedNow) return;
        this.#metrics.lockouts.inc();
        this.#logger.warn('account locked', {
          user: user?.metadata.name ?? attempt.login.slice(0, 64),
          knownUser: user !== undefined,
          sourceAddress: attempt.sourceAddress,
        });
        // The lock holds through the ledger; the status shows it in the original's shape.
        if (user)
          this.#users.recordLock(user).catch((err: unknown) => this.#statusWriteFailed('lock', user, err));
      },
      (err: unknown) => {
        this.#metrics.ledgerWriteFailures.inc({ step: 'settle' });
        if (user && outcome === 'success' && this.#users.writesLoginTimeWithLedger)
          this.#statusWriteFailed('last_login', user, err);
        this.#logger.error('could not settle a login check; it counts as a failure when its lease ends', {
          user: user?.metadata.name ?? attempt.login.slice(0, 64),
          outcome,
          error: String(err),
        });
      },
    );
  }

  /** Not awaited: a login never waits for its record (the writer counts and logs its own failures). */
  #record(user: UserObject, attempt: LoginAttempt, success: boolean, reason: string): void {
    void this.#records?.record({
      username: user.metadata.name,
      success,
      reason,
      sourceIP: attempt.sourceAddress,
      userAgent: attempt.userAgent,
    });
  }

  #statusWriteFailed(write: 'lock' | 'last_login', user: UserObject, err: unknown): void {
    this.#metrics.statusWriteFailures.inc({ write });
    this.#logger.error('could not write the user status', {
      user: user.metadata.name,
      write,
      error: String(err),
    });
  }

  async #openSession(user: UserObject, attempt: LoginAttempt): Promise<TokenResponse> {
    const username = user.metadata.name;
    const previous = this.#singleSession || this.#sessionLimit > 0 ? this.#sessions.sessionsOf(username) : [];
    // Sessions another login here is taking over right now are that login's, the newest: the limit counts
    // them, but the sessions to end (or take over) are chosen among the others.
    const others = previous.filter((s) => !this.#sessions.isTakenOver(s.metadata.name));
    const limit =
      this.#sessionLimit > 0 ? Math.max(1, this.#sessionLimit - (previous.length - others.length)) : 0;
    const ending = this.#singleSession
      ? { sessions: previous, reason: 'single_session' }
      : {
          sessions: sessionsBeyondLimit(others, limit, (s) => this.#sessions.timesOf(s)),
          reason: 'session_limit',
        };
    // At the limit the login takes the first session it would end over (one write, where ending it and
    // creating another took two); a single session is a new one, the others ended before the answer.
    const candidate = this.#singleSession
      ? undefined
      : ending.sessions.find((s) => this.#sessions.canTakeOver(s));
    const opened =
      (candidate && (await this.#takeOver(candidate, user, attempt))) ??
      (await this.#createSession(user, attempt));
    if (opened.tookOver) this.#metrics.sessionsEnded.inc({ reason: ending.reason });
    const ended = Promise.all(
      ending.sessions
        // Not the one taken over (or, when that failed, changed meanwhile: it is left to the next login).
        .filter((old) => old !== candidate && !this.#sessions.isTakenOver(old.metadata.name))
        .map(async (old) => {
          if (await this.#sessions.delete(old.metadata.name))
            this.#metrics.sessionsEnded.inc({ reason: ending.reason });
        }),
    );
    // A single session is the user's to rely on: the other sessions are gone when the login answers. The
    // limit only bounds how many objects pile up, so its deletions go on after the answer; one that fails
    // is tried again at the user's next login (the session is still beyond the limit then).
    if (this.#singleSession) await ended;
    else
      ended.catch((err: unknown) =>
        this.#logger.warn('could not end a session beyond the limit', { user: username, error: String(err) }),
      );
    return tokenResponse(opened.issued);
  }

  async #createSession(user: UserObject, attempt: LoginAttempt): Promise<OpenedSession> {
    const sessionId = newSessionId();
    const issued = this.#tokens.issue({
      username: user.metadata.name,
      clientId: attempt.clientId,
      sessionId,
      incarnation: 1,
    });
    await this.#sessions.create(this.#newSession(sessionId, issued, user, attempt));
    return { issued, tookOver: false };
  }

  /**
   * The login in `session`'s place, if the takeover succeeds; undefined when the session changed or went
   * meanwhile (a refresh of it, another replica's login) or the write failed: the caller creates one.
   */
  async #takeOver(
    session: SessionObject,
    user: UserObject,
    attempt: LoginAttempt,
  ): Promise<OpenedSession | undefined> {
    const sessionId = session.metadata.name;
    const issued = this.#tokens.issue({
      username: user.metadata.name,
      clientId: attempt.clientId,
      sessionId,
      incarnation: (session.spec.incarnation ?? 0) + 1,
    });
    try {
      const taken = await this.#sessions.takeOver(
        session,
        this.#newSession(sessionId, issued, user, attempt),
      );
      return taken ? { issued, tookOver: true } : undefined;
    } catch (err) {
      this.#logger.warn('could not take over a session at the limit; opening a new one', {
        user: user.metadata.name,
        error: String(err),
      });
      return undefined;
    }
  }

  #newSession(sessionId: string, issued: IssuedTokens, user: UserObject, attempt: LoginAttempt): NewSession {
    return {
      sessionId,
      username: user.metadata.name,
      userUID: user.metadata.uid ?? '',
      clientId: attempt.clientId,
      refreshTokenId: issued.refreshTokenId,
      expiresAtSeconds: issued.refreshExpiresAtSeconds,
      ...(attempt.sourceAddress ? { sourceAddress: attempt.sourceAddress } : {}),
    };
  }

  async refreshGrant(clientId: string, refreshToken: string): Promise<TokenResponse> {
    const claims = this.#verifyForGrant(refreshToken, 'refresh');
    if (claims.aud !== clientId) {
      throw oauthError('BadRequest', 'invalid_grant', 'refresh token was issued to another client');
    }
    const user = await this.#users.get(claims.username);
    const session = await this.#sessions.getHeld(claims);
    if (!session) throw oauthError('BadRequest', 'invalid_grant', 'refresh token is revoked or expired');
    if (!user || user.metadata.uid !== session.spec.userUID || stateOf(user) === 'Disabled') {
      await this.#sessions.delete(claims.sid);
      this.#logger.warn('refresh refused: user deleted or disabled', {
        user: claims.username,
        session: claims.sid,
      });
      throw oauthError('BadRequest', 'invalid_grant', 'refresh token is revoked or expired');
    }
    const subject = { username: claims.username, clientId, sessionId: claims.sid, incarnation: claims.sinc };
    const issued = this.#tokens.issue(subject);
    const result = await this.#sessions.rotate(claims, claims.jti, {
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
    if (result.outcome === 'repeated') {
      // A retry within the grace window: the session's current refresh token, signed again (same jti and
      // expiry), so both answers leave the client holding a token the session accepts.
      const again = this.#tokens.issue(subject, {
        tokenId: result.session.spec.refreshTokenId,
        expiresAtSeconds: Math.floor(Date.parse(result.session.spec.expiresAt) / 1000),
      });
      this.#logger.info('refresh repeated within the grace window', {
        user: claims.username,
        client: clientId,
        session: claims.sid,
      });
      return tokenResponse(again);
    }
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
    if (await this.#sessions.end(claims)) {
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
    if (await this.#sessions.end(claims)) {
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

/** A login's tokens, and whether they hold a session taken over from an earlier login at the limit. */
interface OpenedSession {
  issued: IssuedTokens;
  tookOver: boolean;
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
