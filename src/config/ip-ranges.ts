import { isIP } from 'node:net';

/** Names Express' `trust proxy` (proxy-addr) understands as address ranges. */
export const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'] as const;

/**
 * Why an entry of an address list is invalid, or undefined when it is an IP address, a CIDR range
 * (`10.0.0.0/8`, `fd00::/8`) or one of the named ranges. Checked up front so a typo is a startup
 * error naming the entry rather than a request-time failure inside Express.
 */
export function ipRangeError(entry: string): string | undefined {
  if ((NAMED_RANGES as readonly string[]).includes(entry)) return undefined;
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) {
    return `${JSON.stringify(entry)} is not an IP address, a CIDR range or one of ${NAMED_RANGES.join(', ')}`;
  }
  if (slash < 0) return undefined;
  const prefix = entry.slice(slash + 1);
  const maxPrefix = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > maxPrefix) {
    return `${JSON.stringify(entry)} has an invalid prefix length (0-${maxPrefix} for IPv${family})`;
  }
  return undefined;
}
