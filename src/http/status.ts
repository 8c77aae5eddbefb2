/** Kubernetes `Status` objects: the error body of every Kubernetes-style path. */

/** Every `reason` this server puts in a Status (the OpenAPI document lists the same set). */
export const STATUS_REASONS = [
  'BadRequest',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'MethodNotAllowed',
  'NotAcceptable',
  'Conflict',
  'Gone',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'TooManyRequests',
  'InternalError',
  'ServiceUnavailable',
  'Timeout',
  'BadGateway',
] as const;

export type StatusReason = (typeof STATUS_REASONS)[number];

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: { reason?: string; message: string; field?: string }[];
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: StatusReason;
  details?: StatusDetails;
  code: number;
}

const REASON_BY_CODE: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export function statusFor(code: number, message: string, details?: StatusDetails): KubeStatus {
  const status: KubeStatus = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: REASON_BY_CODE[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest'),
    code,
  };
  if (details) status.details = details;
  return status;
}

/**
 * An error a handler throws to answer with a given status code and a message safe to show the caller.
 * Anything else thrown becomes a 500 with a generic message.
 */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly details: StatusDetails | undefined;
  readonly headers: Record<string, string>;
  /** RFC 6749 §5.2 error code used when the path is under /oauth/ (default: invalid_request). */
  readonly oauthError: string | undefined;
  constructor(
    statusCode: number,
    message: string,
    options: { details?: StatusDetails; headers?: Record<string, string>; oauthError?: string } = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.oauthError = options.oauthError;
  }
}
