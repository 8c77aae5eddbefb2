/**
 * The one error domain code throws. It says what went wrong in the API's terms (a kind and a message
 * safe to show the caller), never how a transport spells it: `http/error-mapper.ts` turns it into a
 * Kubernetes `Status` or an RFC 6749 body. Anything else thrown is an internal error.
 */

/**
 * Each kind with its conventional status code. The numbers are part of the API model, not only of HTTP:
 * a Kubernetes `Status` carries the same `code`, and callers compare on it.
 */
export const API_ERROR_CODES = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  Conflict: 409,
  /** A Conflict of its own reason: an object of that name exists (a create refused). */
  AlreadyExists: 409,
  Gone: 410,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  TooManyRequests: 429,
  Internal: 500,
  BadGateway: 502,
  Unavailable: 503,
  GatewayTimeout: 504,
} as const;

export type ApiErrorKind = keyof typeof API_ERROR_CODES;

/** What the error is about, in the shape of Kubernetes `StatusDetails`. */
export interface ApiErrorDetails {
  name?: string;
  group?: string;
  kind?: string;
  /** What was wrong, one entry per bad field or parameter. */
  causes?: { reason?: string; message: string; field?: string }[];
}

export interface ApiErrorOptions {
  details?: ApiErrorDetails;
  /** When asking again may succeed (Unavailable, TooManyRequests). */
  retryAfterSeconds?: number;
  /** The authentication challenge to answer (Unauthorized), e.g. `Bearer realm="platform"`. */
  challenge?: string;
  /** The methods the target accepts (MethodNotAllowed), e.g. `GET, HEAD`. */
  allow?: string;
  /** The media type the target accepts (UnsupportedMediaType). */
  accept?: string;
  /** RFC 6749 §5.2 error code for errors of the OAuth endpoints (default there: invalid_request). */
  oauthError?: string;
}

export class ApiError extends Error {
  readonly kind: ApiErrorKind;
  readonly details: ApiErrorDetails | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly challenge: string | undefined;
  readonly allow: string | undefined;
  readonly accept: string | undefined;
  readonly oauthError: string | undefined;

  constructor(kind: ApiErrorKind, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
    this.kind = kind;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.challenge = options.challenge;
    this.allow = options.allow;
    this.accept = options.accept;
    this.oauthError = options.oauthError;
  }

  /** The kind's status code (400, 404, 503, …). */
  get statusCode(): number {
    return API_ERROR_CODES[this.kind];
  }
}

/** The kind a status code stands for; an unknown code falls back to BadRequest or Internal. */
export function apiErrorKindOf(code: number): ApiErrorKind {
  for (const [kind, known] of Object.entries(API_ERROR_CODES))
    if (known === code) return kind as ApiErrorKind;
  return code >= 500 ? 'Internal' : 'BadRequest';
}
