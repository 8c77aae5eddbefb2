import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { KeySet } from './signing-keys.ts';

export type TokenType = 'access' | 'refresh';

/**
 * The `token_type` claim as the system we re-create writes it. Tokens issued before this change carry the
 * bare `access` / `refresh`; both spellings are accepted until those tokens expire (a rolling upgrade logs
 * no one out), only the original's spelling is issued.
 */
export const TOKEN_TYPE_CLAIM = { access: 'access_token', refresh: 'refresh_token' } as const;
export type TokenTypeClaim = (typeof TOKEN_TYPE_CLAIM)[TokenType];

function typeOfClaim(claim: unknown): TokenType | undefined {
  if (claim === 'access_token' || claim === 'access') return 'access';
  if (claim === 'refresh_token' || claim === 'refresh') return 'refresh';
  return undefined;
}

/** The claims of every token this server issues. Times are Unix seconds. */
export interface TokenClaims {
  iss: string;
  sub: string;
  username: string;
  /** The OAuth client the token was issued to. */
  aud: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  /** Session id: the name of the Session object in the cluster. */
  sid: string;
  /** The session's incarnation the token was issued for (SessionObject.spec.incarnation); absent before it. */
  sinc?: number;
  /** As signed: `access_token` / `refresh_token` (or, in tokens issued before, `access` / `refresh`). */
  token_type: TokenTypeClaim | TokenType;
}

/** Why a token was refused. The reason is safe to show; it never contains the token. */
export type TokenFailure =
  | 'malformed'
  | 'unknown_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'wrong_type';

export class TokenError extends Error {
  readonly failure: TokenFailure;
  constructor(failure: TokenFailure, message: string) {
    super(message);
    this.name = 'TokenError';
    this.failure = failure;
  }
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  accessExpiresInSeconds: number;
  /** jti of the refresh token: the session remembers it to detect reuse. */
  refreshTokenId: string;
  /** When the refresh token (and so the session, unless refreshed) expires, Unix seconds. */
  refreshExpiresAtSeconds: number;
}

export interface TokenServiceOptions {
  keys: KeySet;
  issuer: string;
  /** Client ids a token may be issued to; verification refuses other audiences. */
  audiences: readonly string[];
  accessTokenMaxAgeSeconds: number;
  refreshTokenMaxAgeSeconds: number;
  clockSkewSeconds: number;
  /** Clock in milliseconds; tests pass a fake one. */
  nowMs?: () => number;
  /** Verified access tokens remembered (exact token text → claims) so repeat requests skip the signature check. */
  verifiedCacheSize?: number;
}

/** Signs and verifies the server's JWTs. Pure computation: no I/O, no state beyond the keys. */
export class TokenService {
  readonly #options: TokenServiceOptions;
  readonly #nowMs: () => number;
  readonly #verified = new Map<string, TokenClaims>();
  readonly #verifiedCacheSize: number;

  constructor(options: TokenServiceOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#verifiedCacheSize = options.verifiedCacheSize ?? 10_000;
  }

  get accessTokenMaxAgeSeconds(): number {
    return this.#options.accessTokenMaxAgeSeconds;
  }

  /**
   * A new access/refresh pair. `sameRefresh` re-signs the session's current refresh token (same jti and
   * expiry) instead of minting a new one: the answer to a retried refresh inside the grace window, which
   * must leave the session exactly as the first answer did.
   */
  issue(
    subject: { username: string; clientId: string; sessionId: string; incarnation?: number },
    sameRefresh?: { tokenId: string; expiresAtSeconds: number },
  ): IssuedTokens {
    const o = this.#options;
    const now = Math.floor(this.#nowMs() / 1000);
    const refreshTokenId = sameRefresh?.tokenId ?? newTokenId();
    const base = { iss: o.issuer, sub: subject.username, username: subject.username, aud: subject.clientId };
    const access: TokenClaims = {
      ...base,
      iat: now,
      nbf: now,
      exp: now + o.accessTokenMaxAgeSeconds,
      jti: newTokenId(),
      sid: subject.sessionId,
      ...(subject.incarnation !== undefined ? { sinc: subject.incarnation } : {}),
      token_type: TOKEN_TYPE_CLAIM.access,
    };
    const refresh: TokenClaims = {
      ...access,
      exp: sameRefresh?.expiresAtSeconds ?? now + o.refreshTokenMaxAgeSeconds,
      jti: refreshTokenId,
      token_type: TOKEN_TYPE_CLAIM.refresh,
    };
    return {
      accessToken: this.#sign(access),
      refreshToken: this.#sign(refresh),
      accessExpiresInSeconds: o.accessTokenMaxAgeSeconds,
      refreshTokenId,
      refreshExpiresAtSeconds: refresh.exp,
    };
  }

  /**
   * Verifies signature, algorithm, key, issuer, audience, times and type. Throws TokenError.
   * An access token verified before is answered from memory (only its times are re-checked): the same bytes
   * carry the same valid signature, and revocation is the session's business, checked by the caller.
   */
  verify(token: string, expectedType: TokenType, options: { ignoreExpiration?: boolean } = {}): TokenClaims {
    const cacheable = expectedType === 'access' && !options.ignoreExpiration;
    const known = cacheable ? this.#verified.get(token) : undefined;
    if (known) {
      const nowSeconds = this.#nowMs() / 1000;
      if (nowSeconds < known.exp + this.#options.clockSkewSeconds) return known;
      this.#verified.delete(token);
    }
    const claims = this.#verifyFully(token, expectedType, options);
    if (cacheable && this.#verifiedCacheSize > 0) {
      if (this.#verified.size >= this.#verifiedCacheSize)
        this.#verified.delete(this.#verified.keys().next().value!);
      this.#verified.set(token, Object.freeze(claims));
    }
    return claims;
  }

  #verifyFully(token: string, expectedType: TokenType, options: { ignoreExpiration?: boolean }): TokenClaims {
    const header = parseHeader(token);
    const key = typeof header.kid === 'string' ? this.#options.keys.byKid.get(header.kid) : undefined;
    if (!key) throw new TokenError('unknown_key', 'token signed with an unknown key');
    // The algorithm comes from our key, never from the token: no `none`, no HS256-with-a-public-key confusion.
    if (header.alg !== key.algorithm)
      throw new TokenError('bad_signature', 'token algorithm does not match its key');
    checkPayloadShape(token);
    let payload: unknown;
    try {
      // The issuer is compared below, not by jsonwebtoken: its failures are then told apart by class alone.
      payload = jwt.verify(token, key.verifyWith, {
        algorithms: [key.algorithm],
        clockTolerance: this.#options.clockSkewSeconds,
        clockTimestamp: Math.floor(this.#nowMs() / 1000),
        ignoreExpiration: options.ignoreExpiration ?? false,
      });
    } catch (err) {
      throw translate(err);
    }
    if ((payload as { iss?: unknown }).iss !== this.#options.issuer)
      throw new TokenError('wrong_issuer', 'token has a wrong issuer');
    const claims = asClaims(payload);
    if (!this.#options.audiences.includes(claims.aud)) {
      throw new TokenError('wrong_audience', 'token was issued to an unknown client');
    }
    const type = typeOfClaim(claims.token_type);
    if (type !== expectedType) {
      throw new TokenError('wrong_type', `expected an ${expectedType} token, got a ${type} token`);
    }
    return claims;
  }

  #sign(claims: TokenClaims): string {
    const key = this.#options.keys.signing;
    return jwt.sign(claims, key.signWith, { algorithm: key.algorithm, keyid: key.kid });
  }
}

function newTokenId(): string {
  return randomBytes(16).toString('base64url');
}

function parseHeader(token: string): { alg?: unknown; kid?: unknown } {
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) {
    throw new TokenError('malformed', 'token is not a JWT');
  }
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
    if (typeof header !== 'object' || header === null) throw new Error('not an object');
    return header as { alg?: unknown; kid?: unknown };
  } catch {
    throw new TokenError('malformed', 'token header is not valid JSON');
  }
}

/**
 * Refuses, before any signature check, a payload jsonwebtoken would reject for its shape (not JSON,
 * non-numeric exp or nbf): what remains of its JsonWebTokenErrors is then about the signature.
 */
function checkPayloadShape(token: string): void {
  const payload = jwt.decode(token, { json: true });
  const numericOrAbsent = (v: unknown) => v === undefined || typeof v === 'number';
  if (!payload || !numericOrAbsent(payload.exp) || !numericOrAbsent(payload.nbf))
    throw new TokenError('malformed', 'token is malformed');
}

/** jsonwebtoken's failure as ours, by its error class (never its message text). */
function translate(err: unknown): TokenError {
  // Subclasses of JsonWebTokenError: test them first.
  if (err instanceof jwt.TokenExpiredError) return new TokenError('expired', 'token has expired');
  if (err instanceof jwt.NotBeforeError) return new TokenError('not_yet_valid', 'token is not valid yet');
  if (err instanceof jwt.JsonWebTokenError)
    return new TokenError('bad_signature', 'token signature is invalid');
  return new TokenError('malformed', 'token is malformed');
}

function asClaims(payload: unknown): TokenClaims {
  const p = payload as Partial<Record<keyof TokenClaims, unknown>>;
  const strings = ['iss', 'sub', 'username', 'aud', 'jti', 'sid'] as const;
  const numbers = ['iat', 'nbf', 'exp'] as const;
  if (
    typeof payload !== 'object' ||
    payload === null ||
    strings.some((k) => typeof p[k] !== 'string' || p[k] === '') ||
    numbers.some((k) => typeof p[k] !== 'number') ||
    (p.sinc !== undefined && !isIncarnation(p.sinc)) ||
    typeOfClaim(p.token_type) === undefined
  ) {
    throw new TokenError('malformed', 'token lacks required claims');
  }
  return payload as TokenClaims;
}

function isIncarnation(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}
