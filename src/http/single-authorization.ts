import type { IncomingMessage } from 'node:http';
import { ApiError } from '../kernel/api-error.ts';

/**
 * How many Authorization header lines the client sent. Node keeps only the first of duplicates in
 * `req.headers`; the raw list shows them all.
 */
export function authorizationHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    // The length first: lower-casing every header name of every request would copy each one.
    if (name.length === 13 && name.toLowerCase() === 'authorization') count++;
  }
  return count;
}

/**
 * A BadRequest ApiError for a request with more than one Authorization header, else undefined. Node
 * keeps only the first of duplicates and another hop may keep the last: the two must never disagree
 * about who is calling.
 */
export function duplicateAuthorization(req: IncomingMessage): ApiError | undefined {
  return authorizationHeaderCount(req.rawHeaders) > 1
    ? new ApiError('BadRequest', 'more than one Authorization header: send exactly one')
    : undefined;
}
