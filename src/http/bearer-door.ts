import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { RequestHandler } from 'express';
import type { Identity } from '../kernel/identity.ts';
import { ApiError } from '../kernel/api-error.ts';
import { requestContext } from './request-context.ts';

/** Why a presented token was refused: a metric label and a message safe to return to the caller. */
export interface BearerRefusal {
  outcome: string;
  message: string;
}

export interface BearerDoorOptions {
  /**
   * Access token → identity, at once when the authenticator can answer from memory, else a promise. Throws
   * or rejects when the token is not acceptable.
   */
  authenticate(token: string): Identity | Promise<Identity>;
  /** The refusal an authentication failure stands for; undefined for an unexpected failure (a 500). */
  refusalOf(err: unknown): BearerRefusal | undefined;
  /** Realm named in the `WWW-Authenticate` challenge. */
  realm: string;
  /** Counts every decision by outcome: success, missing, invalid, or the authenticator's refusals. */
  counter: { inc(labels: { outcome: string }): void };
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

const KUBE_PROTOCOL_TOKEN_PREFIX = 'base64url.bearer.authorization.k8s.io.';
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

type Presented = { token: string } | { malformed: string } | undefined;

// The last Authorization header a connection sent and the token in it. A client on a kept-alive connection
// sends the same header on every request; the token string found in it the first time is handed on again.
// That saves the pattern match, and the verified-token cache then finds a key whose hash V8 has already
// computed, instead of hashing a fresh 600-byte string. The header is compared whole, so a connection that
// carries several callers (a proxy in front) only misses.
const LAST_BEARER = Symbol('lastBearer');
type RememberingSocket = Socket & { [LAST_BEARER]?: { header: string; token: string } };

function bearerIn(header: string, socket: RememberingSocket | undefined): string | undefined {
  const last = socket?.[LAST_BEARER];
  if (last !== undefined && last.header === header) return last.token;
  const match = BEARER.exec(header);
  if (!match) return undefined;
  const token = match[1]!;
  if (socket) socket[LAST_BEARER] = { header, token };
  return token;
}

/**
 * The caller's token: `Authorization: Bearer …`, or on a WebSocket upgrade — browsers cannot set
 * headers there — the Kubernetes subprotocol `base64url.bearer.authorization.k8s.io.<token>`, which is
 * then removed so the upstream never sees it.
 */
function presentedToken(req: IncomingMessage): Presented {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const token = bearerIn(header, req.socket as RememberingSocket | undefined);
    return token !== undefined ? { token } : { malformed: 'Authorization header is not "Bearer <token>"' };
  }
  if (req.headers.upgrade === undefined) return undefined;
  const protocols = (req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const carrier = protocols.find((p) => p.startsWith(KUBE_PROTOCOL_TOKEN_PREFIX));
  if (!carrier) return undefined;
  const rest = protocols.filter((p) => p !== carrier);
  if (rest.length > 0) req.headers['sec-websocket-protocol'] = rest.join(', ');
  else delete req.headers['sec-websocket-protocol'];
  const token = Buffer.from(carrier.slice(KUBE_PROTOCOL_TOKEN_PREFIX.length), 'base64url').toString('utf8');
  return /^[A-Za-z0-9._~+/-]+=*$/.test(token)
    ? { token }
    : { malformed: 'the bearer subprotocol does not carry a token' };
}

/**
 * The one place a bearer token is checked, for express routes and WebSocket upgrades alike: the same
 * parsing, the same metric, the same 401 (an `ApiError` with an RFC 6750 challenge).
 */
export class BearerDoor {
  readonly #options: BearerDoorOptions;

  constructor(options: BearerDoorOptions) {
    this.#options = options;
  }

  /** Lets a request in: records and returns the caller's identity, or rejects with an Unauthorized ApiError. */
  async admit(req: IncomingMessage): Promise<Identity> {
    return this.#enter(req);
  }

  /** Express middleware: every path but the anonymous ones needs a valid bearer token. */
  middleware(): RequestHandler {
    return (req, _res, next) => {
      if (isAnonymousPath(req.path)) {
        next();
        return;
      }
      let entered: Identity | Promise<Identity>;
      try {
        entered = this.#enter(req);
      } catch (err) {
        next(err);
        return;
      }
      // Nearly every request is let in at once: no promise, no turn of the microtask queue.
      if (entered instanceof Promise) entered.then(() => next(), next);
      else next();
    };
  }

  /** As admit, but at once when the authenticator answers from memory; throws the ApiError otherwise. */
  #enter(req: IncomingMessage): Identity | Promise<Identity> {
    const presented = presentedToken(req);
    if (presented === undefined) throw this.#refuse(undefined, 'a bearer token is required');
    if ('malformed' in presented)
      throw this.#refuse({ outcome: 'invalid', message: presented.malformed }, presented.malformed);
    let answer: Identity | Promise<Identity>;
    try {
      answer = this.#options.authenticate(presented.token);
    } catch (err) {
      throw this.#refusalFor(err);
    }
    if (answer instanceof Promise) {
      return answer.then(
        (identity) => this.#admitted(req, identity),
        (err: unknown) => {
          throw this.#refusalFor(err);
        },
      );
    }
    return this.#admitted(req, answer);
  }

  #admitted(req: IncomingMessage, identity: Identity): Identity {
    this.#options.counter.inc({ outcome: 'success' });
    requestContext(req).identity = identity;
    return identity;
  }

  /** The 401 an authentication failure stands for; an unexpected failure as it is (a 500). */
  #refusalFor(err: unknown): unknown {
    const refusal = this.#options.refusalOf(err);
    return refusal ? this.#refuse(refusal, refusal.message) : err;
  }

  #refuse(refusal: BearerRefusal | undefined, message: string): ApiError {
    const realm = `Bearer realm="${this.#options.realm}"`;
    this.#options.counter.inc({ outcome: refusal?.outcome ?? 'missing' });
    return new ApiError('Unauthorized', `Unauthorized: ${message}`, {
      challenge: refusal ? `${realm}, error="invalid_token", error_description="${refusal.message}"` : realm,
    });
  }
}
