import type { RequestHandler } from 'express';
import { HttpError } from '../http/status.ts';
import type { AuthMetrics, BearerOutcome } from './auth-metrics.ts';
import { setIdentity, type Identity } from '../kernel/identity.ts';
import { stateOf } from './iam-resources.ts';
import type { SessionStore } from './session-store.ts';
import { TokenError, type TokenService } from './tokens.ts';
import type { UserStore } from './user-store.ts';

export const AUTHENTICATED_GROUP = 'system:authenticated';

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

  constructor(deps: { tokens: TokenService; users: UserStore; sessions: SessionStore }) {
    this.#tokens = deps.tokens;
    this.#users = deps.users;
    this.#sessions = deps.sessions;
  }

  async authenticate(token: string): Promise<Identity> {
    let claims;
    try {
      claims = this.#tokens.verify(token, 'access');
    } catch (err) {
      if (err instanceof TokenError && err.failure === 'expired')
        throw new BearerError('expired', err.message);
      throw new BearerError('invalid', err instanceof TokenError ? err.message : 'invalid token');
    }
    const session = await this.#sessions.get(claims.sid);
    if (!session) throw new BearerError('revoked', 'session has ended');
    const user = this.#users.peek(claims.username) ?? (await this.#users.get(claims.username));
    if (!user || user.metadata.uid !== session.spec.userUID)
      throw new BearerError('user_inactive', 'user no longer exists');
    if (stateOf(user) === 'Disabled') throw new BearerError('user_inactive', 'account is disabled');
    const groups = [...new Set([...(user.spec?.groups ?? []), AUTHENTICATED_GROUP])];
    return { username: user.metadata.name, groups, sessionId: session.metadata.name };
  }
}

/**
 * Paths served without a bearer token: OAuth itself, discovery, probes, version, metrics and this
 * server's own OpenAPI document. The cluster's /openapi/v2 and /openapi/v3 (what kubectl apply and
 * explain read) are proxied and need a token like the rest of the Kubernetes API.
 */
export function isAnonymousPath(path: string): boolean {
  return (
    path.startsWith('/oauth/') ||
    path.startsWith('/.well-known/') ||
    ['/healthz', '/livez', '/readyz', '/version', '/metrics', '/openapi/platform/v3'].includes(path)
  );
}

/**
 * Requires `Authorization: Bearer <access token>` on every path but the anonymous ones and sets the caller's
 * identity. Failures are 401 Kubernetes Status objects with an RFC 6750 `WWW-Authenticate` challenge.
 */
export function bearerAuthentication(deps: {
  authenticator: AccessTokenAuthenticator;
  realm: string;
  metrics: AuthMetrics;
}): RequestHandler {
  const challenge = (error?: BearerError) =>
    error
      ? `Bearer realm="${deps.realm}", error="invalid_token", error_description="${error.message}"`
      : `Bearer realm="${deps.realm}"`;
  const refuse = (error: BearerError | undefined, message: string) => {
    deps.metrics.bearerAuthentications.inc({ outcome: error?.outcome ?? 'missing' });
    return new HttpError(401, `Unauthorized: ${message}`, {
      headers: { 'WWW-Authenticate': challenge(error) },
    });
  };

  return (req, res, next) => {
    if (isAnonymousPath(req.path)) {
      next();
      return;
    }
    const header = req.headers.authorization;
    if (header === undefined) {
      next(refuse(undefined, 'a bearer token is required'));
      return;
    }
    const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
    if (!match) {
      const malformed = new BearerError('invalid', 'Authorization header is not "Bearer <token>"');
      next(refuse(malformed, malformed.message));
      return;
    }
    deps.authenticator.authenticate(match[1]!).then(
      (identity) => {
        deps.metrics.bearerAuthentications.inc({ outcome: 'success' });
        setIdentity(res, identity);
        next();
      },
      (err: unknown) => {
        if (err instanceof BearerError) next(refuse(err, err.message));
        else next(err);
      },
    );
  };
}
