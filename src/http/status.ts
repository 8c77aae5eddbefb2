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
  'AlreadyExists',
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

/** A Status for a code; `reason` only where Kubernetes names one more precisely than the code does. */
export function statusFor(
  code: number,
  message: string,
  details?: StatusDetails,
  reason?: StatusReason,
): KubeStatus {
  const status: KubeStatus = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: reason ?? REASON_BY_CODE[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest'),
    code,
  };
  if (details) status.details = details;
  return status;
}
