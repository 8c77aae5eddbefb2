import type { UserStatus } from './iam-resources.ts';

/** N failed logins within the window lock the account for one window. */
export interface LockoutPolicy {
  maxFailures: number;
  windowSeconds: number;
}

/** Whether logins are refused right now, and for how long still. */
export function lockoutOf(
  status: UserStatus | undefined,
  nowMs: number,
): { locked: false } | { locked: true; retryAfterSeconds: number } {
  if (status?.state !== 'AuthLimitExceeded' || !status.lockedUntil) return { locked: false };
  const untilMs = Date.parse(status.lockedUntil);
  if (!Number.isFinite(untilMs) || untilMs <= nowMs) return { locked: false };
  return { locked: true, retryAfterSeconds: Math.max(1, Math.ceil((untilMs - nowMs) / 1000)) };
}

/**
 * The user's status after one more failed login: failures older than the window are dropped, and reaching
 * the limit locks the account until one window from now. A Disabled state is never overwritten.
 */
export function statusAfterFailure(
  status: UserStatus | undefined,
  nowMs: number,
  policy: LockoutPolicy,
): { status: UserStatus; lockedNow: boolean } {
  const windowStartMs = nowMs - policy.windowSeconds * 1000;
  const failures = [...(status?.recentFailedLogins ?? []), new Date(nowMs).toISOString()]
    .filter((t) => Date.parse(t) > windowStartMs)
    .slice(-policy.maxFailures);
  const next: UserStatus = { ...stripExpiredLock(status, nowMs), recentFailedLogins: failures };
  const lockedNow = next.state !== 'Disabled' && failures.length >= policy.maxFailures;
  if (lockedNow) {
    next.state = 'AuthLimitExceeded';
    next.reason = `${failures.length} failed logins within ${policy.windowSeconds} s`;
    next.lastTransitionTime = new Date(nowMs).toISOString();
    next.lockedUntil = new Date(nowMs + policy.windowSeconds * 1000).toISOString();
  }
  return { status: next, lockedNow };
}

/** The user's status after a successful login: failures forgotten, an expired lock lifted. */
export function statusAfterSuccess(status: UserStatus | undefined, nowMs: number): UserStatus {
  const next: UserStatus = {
    ...stripExpiredLock(status, nowMs),
    lastLoginTime: new Date(nowMs).toISOString(),
  };
  delete next.recentFailedLogins;
  // A user created with kubectl has no status yet: the first login makes "Active" visible in `kubectl get users`.
  next.state ??= 'Active';
  return next;
}

/** Lifts a lock whose time has passed (Active again); anything else is returned unchanged. */
export function stripExpiredLock(status: UserStatus | undefined, nowMs: number): UserStatus {
  const next: UserStatus = { ...status };
  if (next.state === 'AuthLimitExceeded' && !lockoutOf(next, nowMs).locked) {
    next.state = 'Active';
    next.reason = 'lockout window passed';
    next.lastTransitionTime = new Date(nowMs).toISOString();
    delete next.lockedUntil;
    delete next.recentFailedLogins;
  }
  return next;
}
