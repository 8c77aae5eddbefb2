import type { UserStatus } from './iam-resources.ts';

/** N failed password checks within the window lock the account for one window. */
export interface LockoutPolicy {
  maxFailures: number;
  windowSeconds: number;
}

/**
 * Whether the User's status says logins are refused right now (a lock shown by this server, set by the
 * original's controller, or by an administrator), and for how long still. The original's schema has no
 * `lockedUntil`: there a lock lasts one window from its `lastTransitionTime`, as the original's does.
 */
export function lockoutOf(
  status: UserStatus | undefined,
  nowMs: number,
  policy: LockoutPolicy,
): { locked: false } | { locked: true; retryAfterSeconds: number } {
  if (status?.state !== 'AuthLimitExceeded') return { locked: false };
  const untilMs = lockEndOf(status, policy);
  if (!Number.isFinite(untilMs) || untilMs <= nowMs) return { locked: false };
  return { locked: true, retryAfterSeconds: Math.max(1, Math.ceil((untilMs - nowMs) / 1000)) };
}

function lockEndOf(status: UserStatus, policy: LockoutPolicy): number {
  if (status.lockedUntil) return Date.parse(status.lockedUntil);
  if (status.lastTransitionTime) return Date.parse(status.lastTransitionTime) + policy.windowSeconds * 1000;
  return Number.NaN;
}

/**
 * The status showing a lock the admission ledger has just set, in the original's shape (state
 * AuthLimitExceeded, reason, lastTransitionTime; `lockedUntil` where our schema keeps it). A Disabled
 * state is never overwritten.
 */
export function statusAfterLock(
  status: UserStatus | undefined,
  nowMs: number,
  policy: LockoutPolicy,
): UserStatus {
  const next: UserStatus = { ...status };
  delete next.recentFailedLogins;
  if (next.state === 'Disabled') return next;
  next.state = 'AuthLimitExceeded';
  next.reason = `Failed login attempts exceed ${policy.maxFailures} in last ${policy.windowSeconds}s`;
  next.lastTransitionTime = new Date(nowMs).toISOString();
  next.lockedUntil = new Date(nowMs + policy.windowSeconds * 1000).toISOString();
  return next;
}

/** The user's status after a successful login: an expired lock lifted, the login time recorded. */
export function statusAfterSuccess(
  status: UserStatus | undefined,
  nowMs: number,
  policy: LockoutPolicy,
): UserStatus {
  const next: UserStatus = {
    ...stripExpiredLock(status, nowMs, policy),
    lastLoginTime: new Date(nowMs).toISOString(),
  };
  // Written by earlier versions; the count now lives in the admission ledger.
  delete next.recentFailedLogins;
  // A user created with kubectl has no status yet: the first login makes "Active" visible in `kubectl get users`.
  next.state ??= 'Active';
  return next;
}

/** Lifts a lock whose time has passed (Active again); anything else is returned unchanged. */
export function stripExpiredLock(
  status: UserStatus | undefined,
  nowMs: number,
  policy: LockoutPolicy,
): UserStatus {
  const next: UserStatus = { ...status };
  if (next.state === 'AuthLimitExceeded' && !lockoutOf(next, nowMs, policy).locked) {
    next.state = 'Active';
    next.reason = 'lockout window passed';
    next.lastTransitionTime = new Date(nowMs).toISOString();
    delete next.lockedUntil;
    delete next.recentFailedLogins;
  }
  return next;
}
