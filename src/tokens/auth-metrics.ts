import type { Counter, Histogram, Registry } from 'prom-client';
import { counter, gauge, histogram } from '../observability/metrics.ts';
import { seriesCounter, type SeriesCounter } from '../observability/series-metrics.ts';

export type TokenOutcome =
  | 'success'
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'locked'
  | 'rate_limited'
  | 'server_error';

export type BearerOutcome = 'success' | 'missing' | 'invalid' | 'expired' | 'revoked' | 'user_inactive';

export interface AuthMetrics {
  tokenRequests: Counter<'grant_type' | 'outcome'>;
  /** Counted on every API request: a series counter. */
  bearerAuthentications: SeriesCounter<'outcome'>;
  lockouts: Counter;
  sessionsEnded: Counter<'reason'>;
  passwordVerifySeconds: Histogram;
  ledgerWriteFailures: Counter<'step'>;
  statusWriteFailures: Counter<'write'>;
}

/**
 * The token service's metrics. Labels are small closed sets: never a user name, client id or token.
 * Without `activeSessions` (the login thread, whose sessions cache repeats the main thread's) there is
 * no sessions gauge.
 */
export function createAuthMetrics(registry: Registry, activeSessions?: () => number): AuthMetrics {
  if (activeSessions)
    gauge(registry, {
      name: 'platform_auth_sessions_active',
      help: 'Sessions (unexpired logins) in this replica’s cache of the cluster’s Session objects.',
      collect: (g) => g.set(activeSessions()),
    });
  return {
    tokenRequests: counter(registry, {
      name: 'platform_oauth_token_requests_total',
      help: 'Token endpoint requests by grant type and outcome (an RFC 6749 error code, locked or rate_limited).',
      labelNames: ['grant_type', 'outcome'],
    }),
    bearerAuthentications: seriesCounter(registry, {
      name: 'platform_bearer_authentications_total',
      help: 'Bearer token checks of API requests by outcome.',
      labelNames: ['outcome'],
    }),
    lockouts: counter(registry, {
      name: 'platform_login_lockouts_total',
      help: 'Accounts locked by this replica after too many failed logins.',
    }),
    sessionsEnded: counter(registry, {
      name: 'platform_auth_sessions_ended_total',
      help: 'Sessions ended by this replica, by reason (logout, revoke, reuse, single_session, session_limit, expired).',
      labelNames: ['reason'],
    }),
    passwordVerifySeconds: histogram(registry, {
      name: 'platform_password_verify_duration_seconds',
      help: 'Time to verify one password with bcrypt (off the event loop).',
      buckets: [0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6],
    }),
    ledgerWriteFailures: counter(registry, {
      name: 'platform_login_ledger_write_failures_total',
      help: 'Login admission ledger writes that failed after their retries (reserve: the login got 503; settle: the check counts as a failure when its lease ends).',
      labelNames: ['step'],
    }),
    statusWriteFailures: counter(registry, {
      name: 'platform_user_status_write_failures_total',
      help: 'User status writes (lock shown as AuthLimitExceeded, last login) that failed; the lockout itself still holds.',
      labelNames: ['write'],
    }),
  };
}
