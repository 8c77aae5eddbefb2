/**
 * The histogram's `interval` parameter (default 15m), validated and turned into the store's
 * non-deprecated `fixed_interval` / `calendar_interval` (the system we re-create passed the raw text
 * as the legacy `interval` key and answered 500 when the store rejected it).
 */

export type HistogramInterval =
  { kind: 'fixed'; value: string; seconds: number } | { kind: 'calendar'; value: string; seconds: number };

export const DEFAULT_INTERVAL = '15m';
/** Upper bound on buckets of one histogram when the time range is known (the store's own limit is 65535). */
export const MAX_BUCKETS = 10_000;

const FIXED_UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
/** Calendar units, with their shortest length (for bucket counting). */
const CALENDAR_UNIT_SECONDS: Record<string, number> = {
  w: 7 * 86_400,
  M: 28 * 86_400,
  q: 89 * 86_400,
  y: 365 * 86_400,
};

/** Parses `interval`; returns an error message naming the parameter when it is not valid. */
export function parseInterval(raw: string): HistogramInterval | string {
  const match = /^([1-9][0-9]{0,5})([smhdwMqy])$/.exec(raw);
  const hint =
    'interval must be a positive whole number followed by s, m, h or d (e.g. 30s, 15m, 1h, 2d), or one of 1w, 1M, 1q, 1y';
  if (!match) return `${hint}: got ${JSON.stringify(raw.slice(0, 40))}`;
  const amount = Number(match[1]);
  const unit = match[2]!;
  const fixed = FIXED_UNIT_SECONDS[unit];
  if (fixed !== undefined) return { kind: 'fixed', value: raw, seconds: amount * fixed };
  if (amount !== 1)
    return `${hint}: weeks, months, quarters and years take 1 only, got ${JSON.stringify(raw)}`;
  return { kind: 'calendar', value: raw, seconds: CALENDAR_UNIT_SECONDS[unit]! };
}

/** How many buckets the interval cuts [startSeconds, endSeconds] into, at most (inclusive range). */
export function bucketCount(interval: HistogramInterval, startSeconds: number, endSeconds: number): number {
  return Math.floor((endSeconds - startSeconds) / interval.seconds) + 1;
}
