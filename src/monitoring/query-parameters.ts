import { ApiError } from '../kernel/api-error.ts';

/** When to ask: one instant (`time`, now by default) or a range of `step`-spaced points. */
export type QueryTime =
  { kind: 'instant'; time: number } | { kind: 'range'; start: number; end: number; step: number };

/** A ranking of an instant answer (`sort_metric`, `sort_type`, `page`, `limit`). */
export interface Ranking {
  target: string;
  order: 'asc' | 'desc';
  page: number;
  limit: number;
}

type Query = Readonly<Record<string, unknown>>;

const badRequest = (message: string, field?: string): ApiError =>
  new ApiError(
    'BadRequest',
    message,
    field ? { details: { causes: [{ reason: 'FieldValueInvalid', message, field }] } } : {},
  );

/** A query parameter given once (a string), absent or empty (undefined), or a 400 naming it. */
export function parameter(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string') return value;
  const message = `query parameter "${name}" must be given at most once`;
  throw new ApiError('BadRequest', message, {
    details: { causes: [{ reason: 'FieldValueDuplicate', message, field: name }] },
  });
}

/** Seconds of a Go duration (`180s`, `10m`, `1h30m`, `500ms`), as the original parses `step`. */
export function goDurationSeconds(text: string): number {
  const unit: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  const whole = /^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h)/;
  let rest = text;
  let seconds = 0;
  if (rest === '0') return 0;
  if (rest === '' || !whole.test(rest)) throw badRequest(`time: invalid duration "${text}"`, 'step');
  while (rest.length > 0) {
    const m = /^((?:\d+(?:\.\d*)?|\.\d+))(ns|us|µs|ms|s|m|h)/.exec(rest);
    if (!m) throw badRequest(`time: invalid duration "${text}"`, 'step');
    seconds += Number(m[1]) * unit[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return seconds;
}

function unixSeconds(text: string, field: string): number {
  if (!/^[+-]?\d+$/.test(text))
    throw badRequest(`strconv.ParseInt: parsing "${text}": invalid syntax`, field);
  return Number(text);
}

/** Default step of a range query, as the original's. */
const DEFAULT_STEP_SECONDS = 600;

/**
 * `time`, or `start` + `end` (+ `step`), read as the original reads them; a range of more points per
 * series than `maxPoints` is refused before Prometheus is asked.
 */
export function queryTime(query: Query, now: number, maxPoints: number): QueryTime {
  const start = parameter(query, 'start');
  const end = parameter(query, 'end');
  if (start !== undefined && end !== undefined) {
    const s = unixSeconds(start, 'start');
    const e = unixSeconds(end, 'end');
    const stepText = parameter(query, 'step');
    const step = stepText === undefined ? DEFAULT_STEP_SECONDS : goDurationSeconds(stepText);
    if (s > e) throw badRequest("'start' must be before 'end'.", 'start');
    const points = step > 0 ? Math.floor((e - s) / step) + 1 : Infinity;
    if (points > maxPoints) {
      throw badRequest(
        `the range asks for ${points === Infinity ? 'unbounded' : points} points per series (start, end, step); the limit is ${maxPoints} (monitoring.maxPointsPerQuery)`,
        'step',
      );
    }
    return { kind: 'range', start: s, end: e, step };
  }
  if (start === undefined && end === undefined) {
    const time = parameter(query, 'time');
    return { kind: 'instant', time: time === undefined ? now : unixSeconds(time, 'time') };
  }
  throw badRequest("'time' and the combination of 'start' and 'end' are mutually exclusive.");
}

/** The ranking asked for, or undefined without `sort_metric`. */
export function ranking(query: Query): Ranking | undefined {
  const target = parameter(query, 'sort_metric');
  if (target === undefined) return undefined;
  const positive = (name: string, fallback: number, message: string) => {
    const text = parameter(query, name);
    if (text === undefined) return fallback;
    const n = /^[+-]?\d+$/.test(text) ? Number(text) : NaN;
    if (!(n > 0)) throw badRequest(message, name);
    return n;
  };
  return {
    target,
    order: parameter(query, 'sort_type') === 'asc' ? 'asc' : 'desc',
    page: positive('page', 1, "Invalid parameter 'page'."),
    limit: positive('limit', 5, "Invalid parameter 'limit'."),
  };
}

/**
 * The names of `names` that `metrics_filter` selects: a regular expression searched in each name (not
 * anchored), as the original matches it; `.*` when absent. One that does not compile selects none.
 */
export function selectMetrics(names: readonly string[], filter: string | undefined): string[] {
  let pattern: RegExp;
  try {
    pattern = new RegExp(filter ?? '.*', 'u');
  } catch {
    return [];
  }
  return names.filter((name) => pattern.test(name));
}
