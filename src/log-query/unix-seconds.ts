/**
 * Strict parsing of the log API's time parameters: integer Unix timestamps in seconds (spec 4.4).
 * The system we re-create parsed milliseconds "successfully" as seconds and failed later with a 500;
 * here every malformed value is a 400 that names the parameter and says seconds are expected.
 */

/** 9999-12-31T23:59:59Z: the last second a four-digit-year date can name. Anything larger is not seconds. */
export const MAX_UNIX_SECONDS = 253_402_300_799;

const DIGITS = /^(0|[1-9][0-9]*)$/;

export class TimeParameterError extends Error {
  readonly parameter: string;
  constructor(parameter: string, message: string) {
    super(message);
    this.name = 'TimeParameterError';
    this.parameter = parameter;
  }
}

/**
 * The value of `parameter` as whole seconds since the Unix epoch. An absent or empty value is
 * undefined. Throws TimeParameterError for a fraction, a negative or signed number, an exponent, a
 * non-number, or a value too large to be seconds (a millisecond timestamp).
 */
export function parseUnixSeconds(parameter: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const shown = JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
  const expected = `${parameter} must be a Unix timestamp in whole seconds (an integer such as 1700000000)`;
  if (!DIGITS.test(raw)) {
    if (/^-\s*[0-9]/.test(raw))
      throw new TimeParameterError(parameter, `${expected}, not negative: got ${shown}`);
    if (/^[0-9]+[.,][0-9]+$/.test(raw))
      throw new TimeParameterError(
        parameter,
        `${expected}; fractions of a second are not allowed: got ${shown}`,
      );
    throw new TimeParameterError(parameter, `${expected}: got ${shown}`);
  }
  const seconds = raw.length > 15 ? Number.POSITIVE_INFINITY : Number(raw);
  if (seconds > MAX_UNIX_SECONDS) {
    throw new TimeParameterError(
      parameter,
      `${expected}; ${shown} is too large for seconds (the latest is ${MAX_UNIX_SECONDS}, year 9999) — ` +
        'it looks like milliseconds, which are not accepted: divide by 1000',
    );
  }
  return seconds;
}
