import type { SessionObject } from '../users/iam-resources.ts';

/**
 * The sessions a new login ends so that the user holds at most `limit` afterwards, the new one included.
 * Those nearest to expiry go first: a refresh moves a session's expiry forward, so they are the ones used
 * least recently. `limit` 0 means no limit.
 *
 * Why a limit: every session is an object in etcd and in each replica's cache until its refresh token
 * expires. A script that logs in again and again without logging out would otherwise pile them up (a
 * login storm of one account made ~370 a minute in the soak benchmark).
 */
export function sessionsBeyondLimit(existing: readonly SessionObject[], limit: number): SessionObject[] {
  if (limit <= 0) return [];
  const excess = existing.length - (limit - 1);
  if (excess <= 0) return [];
  return [...existing].sort(byExpiryThenAge).slice(0, excess);
}

function byExpiryThenAge(a: SessionObject, b: SessionObject): number {
  return (
    timeOf(a.spec.expiresAt) - timeOf(b.spec.expiresAt) ||
    timeOf(a.metadata.creationTimestamp) - timeOf(b.metadata.creationTimestamp) ||
    (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0)
  );
}

/** Milliseconds since the epoch; an absent or unreadable time counts as the oldest. */
function timeOf(value: Date | string | undefined): number {
  const ms = value === undefined ? NaN : new Date(value).getTime();
  return Number.isNaN(ms) ? 0 : ms;
}
