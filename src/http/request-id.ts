import { randomUUID } from 'node:crypto';

const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Compact JWS/JWT shape (header.payload.signature): a token pasted into the wrong header. */
const TOKEN_SHAPED = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Keeps a caller's X-Request-Id when it is short and plain (log-safe) and does not look like a token,
 * otherwise makes one. The id is echoed and logged, so it must never carry a credential.
 */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && ACCEPTABLE_ID.test(header) && !TOKEN_SHAPED.test(header)
    ? header
    : randomUUID();
}
