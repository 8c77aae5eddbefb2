import type { CredentialsData } from '../cluster/handed-credentials.ts';
import type { Config } from '../config/config.ts';
import { ApiError, type ApiErrorKind, type ApiErrorOptions } from '../kernel/api-error.ts';
import type { MetricsSnapshot } from '../observability/metrics-export.ts';
import type { LoginAttempt, TokenResponse } from './oauth-service.ts';
import type { KeySet } from './signing-keys.ts';

/**
 * What the login thread starts from: the resolved configuration, the process's signing keys, and the
 * main thread's credentials for the kube-apiserver (sent again as 'credentials' when they change).
 */
export interface LoginWorkerData {
  config: Config;
  keys: KeySet;
  credentials: CredentialsData;
}

/** A password grant sent to the login thread; the request id goes on its log lines. */
export interface GrantRequest {
  attempt: LoginAttempt;
  requestId: string | undefined;
}

export type ToLoginThread =
  | { type: 'grant'; id: number; request: GrantRequest }
  | { type: 'metrics'; id: number }
  | { type: 'credentials'; credentials: CredentialsData }
  | { type: 'stop' };

export type FromLoginThread =
  | { type: 'ready' }
  | { type: 'granted'; id: number; response: TokenResponse }
  | { type: 'refused'; id: number; error: SentApiError }
  | { type: 'failed'; id: number }
  | { type: 'metrics'; id: number; snapshot: MetricsSnapshot };

/** An ApiError as plain data: errors lose their class on the way between threads. */
export interface SentApiError {
  kind: ApiErrorKind;
  message: string;
  options: ApiErrorOptions;
}

export function sentApiError(err: ApiError): SentApiError {
  const options: ApiErrorOptions = {};
  if (err.details !== undefined) options.details = err.details;
  if (err.retryAfterSeconds !== undefined) options.retryAfterSeconds = err.retryAfterSeconds;
  if (err.challenge !== undefined) options.challenge = err.challenge;
  if (err.allow !== undefined) options.allow = err.allow;
  if (err.accept !== undefined) options.accept = err.accept;
  if (err.oauthError !== undefined) options.oauthError = err.oauthError;
  return { kind: err.kind, message: err.message, options };
}

export function receivedApiError(sent: SentApiError): ApiError {
  return new ApiError(sent.kind, sent.message, sent.options);
}
