import type { IncomingMessage } from 'node:http';
import { ApiError, type ApiErrorKind, type ApiErrorOptions } from '../kernel/api-error.ts';

/** Largest token/revoke request body accepted; real ones are a few hundred bytes. */
export const MAX_FORM_BYTES = 16 * 1024;

/** An RFC 6749 §5.2 error: rendered as `{error, error_description}` by the one error handler. */
export function oauthError(
  kind: ApiErrorKind,
  error: string,
  description: string,
  options: ApiErrorOptions = {},
): ApiError {
  return new ApiError(kind, description, { ...options, oauthError: error });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
/**
 * Parses an urlencoded body strictly: invalid UTF-8 (raw or percent-encoded), bad escapes and repeated
 * fields are errors rather than silently replaced or merged. Empty values count as absent (RFC 6749 §3.1).
 */
export function parseForm(body: Buffer): Map<string, string> {
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    throw oauthError('BadRequest', 'invalid_request', 'request body is not valid UTF-8');
  }
  const fields = new Map<string, string>();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decodeComponent(pair.slice(eq + 1));
    if (fields.has(name))
      throw oauthError('BadRequest', 'invalid_request', `parameter ${printable(name)} is repeated`);
    fields.set(name, value);
  }
  for (const [name, value] of fields) if (value === '') fields.delete(name);
  return fields;
}

function decodeComponent(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    throw oauthError('BadRequest', 'invalid_request', 'request body has a malformed percent-encoding');
  }
}

/** A field name safe to echo in an error message. */
function printable(name: string): string {
  return JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name);
}

/** A required field; missing → 400 invalid_request naming it. */
export function requireField(form: ReadonlyMap<string, string>, name: string): string {
  const value = form.get(name);
  if (value === undefined) throw oauthError('BadRequest', 'invalid_request', `parameter ${name} is required`);
  return value;
}

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** How the client authenticated: decides whether a failure carries `WWW-Authenticate`. */
  method: 'client_secret_basic' | 'client_secret_post';
}

/**
 * Client credentials from HTTP Basic (RFC 6749 §2.3.1, form-urlencoded id and secret) or from the form.
 * Using both at once is refused, as the RFC requires a single method.
 */
export function clientCredentialsOf(
  req: IncomingMessage,
  form: ReadonlyMap<string, string>,
): ClientCredentials {
  const authorization = req.headers.authorization;
  const inForm = form.has('client_id') || form.has('client_secret');
  // Other schemes (a stale `Bearer` a client sends everywhere) are not client authentication: ignored here.
  if (authorization !== undefined && /^basic(\s|$)/i.test(authorization)) {
    const basic = parseBasic(authorization);
    if (inForm) {
      throw oauthError(
        'BadRequest',
        'invalid_request',
        'send client credentials either with HTTP Basic or in the form, not both',
      );
    }
    return { ...basic, method: 'client_secret_basic' };
  }
  const clientId = form.get('client_id');
  const clientSecret = form.get('client_secret');
  if (clientId === undefined)
    throw oauthError('Unauthorized', 'invalid_client', 'client authentication is required');
  if (clientSecret === undefined)
    throw oauthError('Unauthorized', 'invalid_client', 'client authentication failed');
  return { clientId, clientSecret, method: 'client_secret_post' };
}

export const BASIC_CHALLENGE = { challenge: 'Basic realm="oauth", charset="UTF-8"' };

function parseBasic(header: string): { clientId: string; clientSecret: string } {
  const invalid = () =>
    oauthError('Unauthorized', 'invalid_client', 'malformed HTTP Basic client credentials', BASIC_CHALLENGE);
  const match = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header);
  if (!match) throw invalid();
  const encoded = match[1]!;
  if (encoded.length % 4 !== 0) throw invalid();
  let decoded: string;
  try {
    decoded = strictUtf8.decode(Buffer.from(encoded, 'base64'));
  } catch {
    throw invalid();
  }
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw invalid();
  try {
    // RFC 6749 §2.3.1: id and secret are form-urlencoded before being joined.
    const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
    const clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    if (clientSecret === '') throw new Error('empty secret');
    return { clientId, clientSecret };
  } catch {
    throw invalid();
  }
}
