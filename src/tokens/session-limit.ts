import type { SessionObject } from '../users/iam-resources.ts';

/** A session's times in Unix ms: `expiresAtMs` NaN when unreadable (never expires by it). */
export interface SessionTimes {
  expiresAtMs: number;
  createdAtMs: number;
}

/**
 * The sessions a new login ends so that the user holds at most `limit` afterwards, the new one included.
 * Those nearest to expiry go first: a refresh moves a session's expiry forward, so they are the ones used
 * least recently. `limit` 0 means no limit.
 *
 * Why a limit: every session is an object in etcd and in each replica's cache until its refresh token
 * expires. A script that logs in again and again without logging out would otherwise pile them up (a
 * login storm of one account made ~370 a minute in the soak benchmark).
 */
export function sessionsBeyondLimit(
  existing: readonly SessionObject[],
  limit: number,
  timesOf: (session: SessionObject) => SessionTimes = parsedTimes,
): SessionObject[] {
  if (limit <= 0) return [];
  const excess = existing.length - (limit - 1);
  if (excess <= 0) return [];
  // Times read once per session, not at every comparison (a user at the limit has a hundred sessions);
  // the store's timesOf reads them once per cached object.
  const keyed = existing.map((session) => {
    const times = timesOf(session);
    return {
      session,
      expires: Number.isNaN(times.expiresAtMs) ? 0 : times.expiresAtMs,
      created: times.createdAtMs,
    };
  });
  // At the limit each login ends one session: the first in the order, found in one pass, not a sort.
  if (excess === 1) return [keyed.reduce((first, k) => (byExpiryThenAge(k, first) < 0 ? k : first)).session];
  return keyed
    .sort(byExpiryThenAge)
    .slice(0, excess)
    .map((k) => k.session);
}

interface Keyed {
  session: SessionObject;
  expires: number;
  created: number;
}

function byExpiryThenAge(a: Keyed, b: Keyed): number {
  const [x, y] = [a.session.metadata.name, b.session.metadata.name];
  return a.expires - b.expires || a.created - b.created || (x < y ? -1 : x > y ? 1 : 0);
}

/** A session's times, parsed from the object. */
export function parsedTimes(session: SessionObject): SessionTimes {
  return {
    expiresAtMs: Date.parse(session.spec.expiresAt),
    createdAtMs: msOrOldest(session.metadata.creationTimestamp),
  };
}

/** Milliseconds since the epoch; an absent or unreadable time counts as the oldest. */
function msOrOldest(value: Date | string | undefined): number {
  const ms = value === undefined ? NaN : new Date(value).getTime();
  return Number.isNaN(ms) ? 0 : ms;
}
