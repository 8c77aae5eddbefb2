/**
 * Which indices a query reads. The log collector writes one index per UTC day of the record's time,
 * `<prefix>-YYYY.MM.DD`; a bounded range reads only its days (missing days are skipped by the store),
 * an unbounded or long one reads `<prefix>-*` and relies on the time filter.
 */

/** Ranges spanning more days than this read `<prefix>-*` rather than a long list of names. */
export const MAX_LISTED_DAYS = 31;

const SECONDS_PER_DAY = 86_400;

export function dailyIndex(prefix: string, unixSeconds: number): string {
  const date = new Date(unixSeconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${prefix}-${date.getUTCFullYear()}.${pad(date.getUTCMonth() + 1)}.${pad(date.getUTCDate())}`;
}

export function indicesFor(
  prefix: string,
  startTimeSeconds: number | undefined,
  endTimeSeconds: number,
): string[] {
  if (startTimeSeconds === undefined) return [`${prefix}-*`];
  const firstDay = Math.floor(startTimeSeconds / SECONDS_PER_DAY);
  const lastDay = Math.floor(endTimeSeconds / SECONDS_PER_DAY);
  if (lastDay - firstDay + 1 > MAX_LISTED_DAYS) return [`${prefix}-*`];
  const names: string[] = [];
  for (let day = firstDay; day <= lastDay; day++) names.push(dailyIndex(prefix, day * SECONDS_PER_DAY));
  return names;
}
