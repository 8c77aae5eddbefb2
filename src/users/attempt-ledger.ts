import type { LockoutPolicy } from './lockout.ts';

/**
 * The password checks of one login name, as admission control counts them. Kept in the cluster (on the
 * User, or in a shard object for names that are no user) and changed only by compare-and-swap, so every
 * replica counts into the same ledger. Times are Unix milliseconds.
 */
export interface AttemptLedger {
  /** Failed checks inside the window, oldest first (at most maxFailures are kept). */
  failures: number[];
  /** Checks admitted and not settled yet: reservation id → when it was reserved. */
  pending: Record<string, number>;
  /** Set when the failures reached the limit: no check is admitted before this time. */
  lockedUntil?: number;
}

export const EMPTY_LEDGER: AttemptLedger = Object.freeze({ failures: [], pending: {} }) as AttemptLedger;

/**
 * How long a reservation may stay unsettled. A replica that dies between reserving and settling leaves its
 * reservation behind; after the lease it counts as a failure at its reservation time (never dropped: a
 * crashed check may have been a wrong guess).
 */
export const RESERVATION_LEASE_MS = 30_000;

/** A check not admitted. `checksRunning`: because admitted checks are still running, not for failures. */
export interface Refusal {
  admitted: false;
  retryAfterSeconds: number;
  checksRunning?: true;
}

export type Admission = { admitted: true; ledger: AttemptLedger } | Refusal;

export type Settlement = 'failure' | 'success' | 'released';

/** Drops what the window has forgotten, turns stale reservations into failures and lifts a passed lock. */
export function normalized(ledger: AttemptLedger, nowMs: number, policy: LockoutPolicy): AttemptLedger {
  const windowStart = nowMs - policy.windowSeconds * 1000;
  const failures = [...ledger.failures];
  const pending: Record<string, number> = {};
  for (const [id, at] of Object.entries(ledger.pending)) {
    if (nowMs - at > RESERVATION_LEASE_MS) failures.push(at);
    else pending[id] = at;
  }
  if (ledger.lockedUntil !== undefined && ledger.lockedUntil > nowMs) {
    return { failures: recent(failures, windowStart, policy), pending, lockedUntil: ledger.lockedUntil };
  }
  // A lock that has passed starts a new count: the failures that caused it are spent.
  const kept = ledger.lockedUntil !== undefined ? failures.filter((t) => t > ledger.lockedUntil!) : failures;
  return { failures: recent(kept, windowStart, policy), pending };
}

function recent(failures: number[], windowStart: number, policy: LockoutPolicy): number[] {
  return failures
    .filter((t) => t > windowStart)
    .sort((a, b) => a - b)
    .slice(-policy.maxFailures);
}

/**
 * Admits one more password check if the checks already counted (failed, or admitted and still running)
 * leave room under the limit; otherwise refuses it before any password is looked at.
 */
export function admit(
  ledger: AttemptLedger,
  reservationId: string,
  nowMs: number,
  policy: LockoutPolicy,
): Admission {
  const current = normalized(ledger, nowMs, policy);
  if (current.lockedUntil !== undefined) {
    return { admitted: false, retryAfterSeconds: secondsUntil(current.lockedUntil, nowMs) };
  }
  const counted = [...current.failures, ...Object.values(current.pending)].sort((a, b) => a - b);
  if (counted.length >= policy.maxFailures) {
    if (Object.keys(current.pending).length > 0) {
      // Running checks fill the room, and each settles within a second or so: a success frees room, and
      // failures that reach the limit lock. Waiting a whole window would be wrong for one account's
      // concurrent logins with the right password. (A failure is settled before it is answered, so a
      // guess sent after the answer to the last allowed failure meets the lock, not this.)
      return { admitted: false, retryAfterSeconds: 1, checksRunning: true };
    }
    // Room frees when the oldest counted failure leaves the window.
    return {
      admitted: false,
      retryAfterSeconds: secondsUntil(counted[0]! + policy.windowSeconds * 1000, nowMs),
    };
  }
  return { admitted: true, ledger: { ...current, pending: { ...current.pending, [reservationId]: nowMs } } };
}

/**
 * Records how an admitted check ended. A failure that reaches the limit locks for one window from now;
 * a success forgets the failures (unless a lock was set meanwhile by other checks); a released
 * reservation (the password was never checked) leaves no trace.
 */
export function settle(
  ledger: AttemptLedger,
  reservationId: string,
  outcome: Settlement,
  nowMs: number,
  policy: LockoutPolicy,
): { ledger: AttemptLedger; lockedNow: boolean } {
  const wasPending = reservationId in ledger.pending;
  const current = normalized(ledger, nowMs, policy);
  const pending = { ...current.pending };
  delete pending[reservationId];
  if (outcome === 'released') return { ledger: { ...current, pending }, lockedNow: false };
  if (outcome === 'success') {
    if (current.lockedUntil !== undefined) return { ledger: { ...current, pending }, lockedNow: false };
    return { ledger: { failures: [], pending }, lockedNow: false };
  }
  // A reservation that outlived its lease was already counted as a failure by normalized(). One that is
  // missing for another reason (an administrator cleared the ledger) is counted now: never dropped.
  const alreadyCounted = wasPending && !(reservationId in current.pending);
  const failures = alreadyCounted ? current.failures : [...current.failures, nowMs];
  const next: AttemptLedger = { ...current, failures: failures.slice(-policy.maxFailures), pending };
  const lockedNow = current.lockedUntil === undefined && next.failures.length >= policy.maxFailures;
  if (lockedNow) next.lockedUntil = nowMs + policy.windowSeconds * 1000;
  return { ledger: next, lockedNow };
}

/** Whether the ledger refuses checks right now, and for how long. */
export function lockOf(
  ledger: AttemptLedger,
  nowMs: number,
): { locked: false } | { locked: true; retryAfterSeconds: number } {
  return ledger.lockedUntil !== undefined && ledger.lockedUntil > nowMs
    ? { locked: true, retryAfterSeconds: secondsUntil(ledger.lockedUntil, nowMs) }
    : { locked: false };
}

export function isEmpty(ledger: AttemptLedger): boolean {
  return (
    ledger.failures.length === 0 &&
    Object.keys(ledger.pending).length === 0 &&
    ledger.lockedUntil === undefined
  );
}

function secondsUntil(atMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((atMs - nowMs) / 1000));
}

/** Compact JSON for an annotation or a shard entry: `{"f":[…],"p":{…},"l":…}`. */
export function encodeLedger(ledger: AttemptLedger): string {
  return JSON.stringify({
    f: ledger.failures,
    p: ledger.pending,
    ...(ledger.lockedUntil !== undefined ? { l: ledger.lockedUntil } : {}),
  });
}

/** Anything unreadable is an empty ledger: a hand-edited annotation must not block logins forever. */
export function decodeLedger(text: string | undefined): AttemptLedger {
  if (!text) return EMPTY_LEDGER;
  try {
    const raw = JSON.parse(text) as { f?: unknown; p?: unknown; l?: unknown };
    const failures = Array.isArray(raw.f) ? raw.f.filter((t): t is number => Number.isFinite(t)) : [];
    const pending: Record<string, number> = {};
    if (raw.p && typeof raw.p === 'object') {
      for (const [id, at] of Object.entries(raw.p as Record<string, unknown>)) {
        if (typeof at === 'number' && Number.isFinite(at)) pending[id] = at;
      }
    }
    return {
      failures,
      pending,
      ...(typeof raw.l === 'number' && Number.isFinite(raw.l) ? { lockedUntil: raw.l } : {}),
    };
  } catch {
    return EMPTY_LEDGER;
  }
}
