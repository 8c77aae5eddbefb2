import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { servedUnder } from '../http/path-guard.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { AddressLimiter } from './address-limiter.ts';
import type { AuthMetrics, TokenOutcome } from './auth-metrics.ts';
import { BearerError, type AccessTokenAuthenticator } from './access-token-authenticator.ts';
import type { ClientRegistry } from './clients.ts';
import {
  BASIC_CHALLENGE,
  clientCredentialsOf,
  MAX_FORM_BYTES,
  oauthError,
  parseForm,
  requireField,
} from './oauth-request.ts';
import type { OAuthService, TokenResponse } from './oauth-service.ts';
import type { GrantRequest } from './login-messages.ts';
import { jwksOf, type KeySet } from './signing-keys.ts';

/** Where the password grant is decided: the service itself, or the login thread (login-thread.ts). */
export interface PasswordGrants {
  passwordGrant(request: GrantRequest): Promise<TokenResponse>;
}

export interface OAuthRoutesDependencies {
  /** The other grants, revocation and logout. */
  service: OAuthService;
  passwordGrants: PasswordGrants;
  authenticator: AccessTokenAuthenticator;
  clients: ClientRegistry;
  keys: KeySet;
  limiter: AddressLimiter;
  metrics: AuthMetrics;
  issuer: string;
  /** External base URL for the discovery document; empty: taken from each request. */
  publicUrl: string;
}

const readRawBody = express.raw({ type: () => true, limit: MAX_FORM_BYTES, inflate: false });

/**
 * Accepts only `application/x-www-form-urlencoded` (UTF-8) bodies of at most 16 KiB and puts the parsed
 * fields on `res.locals.form`. Wrong type → 415, too large → 413, malformed or repeated field → 400.
 */
const formBody: RequestHandler = (req, res, next) => {
  const type = req.headers['content-type'];
  if (!type || !req.is('application/x-www-form-urlencoded')) {
    next(
      oauthError(
        'UnsupportedMediaType',
        'invalid_request',
        'Content-Type must be application/x-www-form-urlencoded',
        {
          accept: 'application/x-www-form-urlencoded',
        },
      ),
    );
    return;
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1];
  if (charset && !/^utf-?8$/i.test(charset)) {
    next(
      oauthError(
        'UnsupportedMediaType',
        'invalid_request',
        `charset ${charset} is not supported; send UTF-8`,
      ),
    );
    return;
  }
  readRawBody(req, res, (err?: unknown) => {
    if (err) {
      next(err);
      return;
    }
    try {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      res.locals['form'] = parseForm(body);
      next();
    } catch (parseErr) {
      next(parseErr);
    }
  });
};

/** The form fields of a request that went through `formBody`. */
function formOf(res: { locals: Record<string, unknown> }): ReadonlyMap<string, string> {
  return res.locals['form'] as ReadonlyMap<string, string>;
}

const GRANT_TYPES = ['password', 'refresh_token'] as const;

/**
 * /oauth/token (password and refresh_token grants), /oauth/revoke (RFC 7009), /oauth/logout, /oauth/keys
 * (JWKS) and the discovery documents. Thin: parse, authenticate the client, call the service, respond.
 */
export function oauthRoutes(deps: OAuthRoutesDependencies): Router {
  const router = Router();
  const noStore: RequestHandler = (_req, res, next) => {
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    next();
  };
  const limitAddress: RequestHandler = (req, _res, next) => {
    const verdict = deps.limiter.take(req.ip ?? 'unknown');
    if (verdict.allowed) {
      next();
      return;
    }
    if (req.path === '/oauth/token')
      deps.metrics.tokenRequests.inc({ grant_type: 'unknown', outcome: 'rate_limited' });
    next(
      oauthError(
        'TooManyRequests',
        'invalid_request',
        `too many requests from this address; retry after ${verdict.retryAfterSeconds} s`,
        { retryAfterSeconds: verdict.retryAfterSeconds },
      ),
    );
  };

  router.post('/oauth/token', noStore, limitAddress, formBody, (req, res, next) => {
    const form = formOf(res);
    const grantType = form.get('grant_type');
    const grantLabel = (GRANT_TYPES as readonly string[]).includes(grantType ?? '') ? grantType! : 'other';
    const count = (outcome: TokenOutcome) =>
      deps.metrics.tokenRequests.inc({ grant_type: grantLabel, outcome });
    handleToken(req, res, form, grantType).then(
      () => count('success'),
      (err: unknown) => {
        count(outcomeOf(err));
        next(err);
      },
    );
  });

  const handleToken = async (
    req: Request,
    res: Response,
    form: ReadonlyMap<string, string>,
    grantType: string | undefined,
  ): Promise<void> => {
    const client = authenticateClient(req, form);
    if (grantType === 'password') {
      const login = requireField(form, 'username');
      const password = requireField(form, 'password');
      res.json(
        await deps.passwordGrants.passwordGrant({
          attempt: {
            clientId: client,
            login,
            password,
            sourceAddress: req.ip,
            userAgent: req.get('user-agent'),
          },
          requestId: res.getHeader('X-Request-Id')?.toString(),
        }),
      );
      return;
    }
    if (grantType === 'refresh_token') {
      res.json(await deps.service.refreshGrant(client, requireField(form, 'refresh_token')));
      return;
    }
    // A missing grant_type (or an empty one) too, as the original answers it.
    throw oauthError(
      'BadRequest',
      'unsupported_grant_type',
      `${grantType === undefined ? 'parameter grant_type is required; ' : ''}supported grant types: password, refresh_token`,
    );
  };

  const authenticateClient = (req: Request, form: ReadonlyMap<string, string>): string => {
    const credentials = clientCredentialsOf(req, form);
    if (!deps.clients.authenticate(credentials.clientId, credentials.clientSecret)) {
      const options = credentials.method === 'client_secret_basic' ? BASIC_CHALLENGE : {};
      throw oauthError('Unauthorized', 'invalid_client', 'client authentication failed', options);
    }
    return credentials.clientId;
  };

  router.post('/oauth/revoke', noStore, limitAddress, formBody, (req, res, next) => {
    const form = formOf(res);
    Promise.resolve()
      .then(async () => {
        const client = authenticateClient(req, form);
        await deps.service.revoke(client, requireField(form, 'token'), form.get('token_type_hint'));
        // RFC 7009 gives 200 no meaning beyond success; an empty JSON object keeps JSON-only clients happy.
        res.status(200).json({});
      })
      .catch(next);
  });

  // POST, and GET as the original's console calls it (the original serves only GET): the same answer.
  const logout: RequestHandler = (req, res, next) => {
    // Express answers HEAD with the GET handler; a probe must not end a session, so HEAD falls through to 405.
    if (req.method === 'HEAD') {
      next();
      return;
    }
    const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    if (!match) {
      next(
        oauthError(
          'Unauthorized',
          'invalid_token',
          'send the access token of the session as Authorization: Bearer',
          {
            challenge: `Bearer realm="oauth"`,
          },
        ),
      );
      return;
    }
    deps.service.logout(match[1]!).then(() => res.json({ message: 'success' }), next);
  };
  router.post('/oauth/logout', noStore, logout);
  router.get('/oauth/logout', noStore, logout);

  // Who the bearer token belongs to, as every API behind authentication sees it.
  router.get('/oauth/userinfo', noStore, (req, res, next) => {
    const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    const invalid = (message: string) =>
      oauthError('Unauthorized', 'invalid_token', message, {
        challenge: `Bearer realm="oauth", error="invalid_token"`,
      });
    if (!match) {
      next(invalid('send an access token as Authorization: Bearer'));
      return;
    }
    deps.authenticator.authenticate(match[1]!).then(
      (identity) =>
        res.json({ sub: identity.username, username: identity.username, groups: identity.groups }),
      (err: unknown) => next(err instanceof BearerError ? invalid(err.message) : err),
    );
  });

  router.get('/oauth/keys', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(jwksOf(deps.keys));
  });

  const discovery: RequestHandler = (req, res) => {
    const base = deps.publicUrl ? deps.publicUrl.replace(/\/+$/, '') : `${req.protocol}://${req.get('host')}`;
    // Built from the Host header when no public URL is configured: a shared cache must not keep one
    // caller's (possibly forged) Host and hand it to everyone else.
    if (deps.publicUrl) res.set('Cache-Control', 'public, max-age=300');
    else res.set({ 'Cache-Control': 'private, no-store', Vary: 'Host' });
    res.json({
      issuer: deps.issuer,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      jwks_uri: `${base}/oauth/keys`,
      grant_types_supported: [...GRANT_TYPES],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      access_token_signing_alg_values_supported: [deps.keys.signing.algorithm],
      claims_supported: ['iss', 'sub', 'username', 'aud', 'iat', 'nbf', 'exp', 'jti', 'sid', 'token_type'],
    });
  };
  router.get('/.well-known/openid-configuration', discovery);
  router.get('/.well-known/oauth-authorization-server', discovery);
  router.get('/oauth/.well-known/openid-configuration', discovery);

  // What reaches this point under /oauth/ matched no route: a wrong method (405 naming the allowed ones) or
  // an unknown endpoint (404), both in RFC 6749 form. A middleware, not routes, so the route table stays exact.
  const allowedMethods: Record<string, string> = {
    '/oauth/token': 'POST',
    '/oauth/revoke': 'POST',
    '/oauth/logout': 'GET, POST',
    '/oauth/keys': 'GET, HEAD',
    '/oauth/userinfo': 'GET, HEAD',
    '/oauth/.well-known/openid-configuration': 'GET, HEAD',
  };
  router.use((req, _res, next) => {
    if (!req.path.startsWith('/oauth/')) {
      next();
      return;
    }
    const allow = allowedMethods[req.path];
    next(
      allow
        ? oauthError(
            'MethodNotAllowed',
            'invalid_request',
            `method ${req.method} is not allowed; use ${allow}`,
            {
              allow,
            },
          )
        : oauthError('NotFound', 'invalid_request', `no OAuth endpoint at ${req.path}`),
    );
  });
  return servedUnder(router, ['/oauth/', '/.well-known/']);
}

function outcomeOf(err: unknown): TokenOutcome {
  if (!(err instanceof ApiError)) return 'server_error';
  if (err.kind === 'TooManyRequests') return err.oauthError === 'invalid_grant' ? 'locked' : 'rate_limited';
  const known: TokenOutcome[] = [
    'invalid_request',
    'invalid_client',
    'invalid_grant',
    'unsupported_grant_type',
  ];
  return (
    known.find((o) => o === err.oauthError) ?? (err.statusCode >= 500 ? 'server_error' : 'invalid_request')
  );
}
