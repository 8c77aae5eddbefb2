import url from 'node:url';

/**
 * Ends Node's per-call stack walk in the legacy `url.parse()`, which http-proxy and
 * http-proxy-middleware call twice per proxied request.
 *
 * Why: Node 24 warns once (DEP0169) when `url.parse()` is called from outside `node_modules`, and until
 * it has warned it inspects the caller's stack at every call to find out where the call came from. Calls
 * from dependencies never warn, so they pay that inspection for the life of the process: ~3 µs per call
 * alone, and 3% of a proxied request's CPU in the server's profile (docs/benchmarks.md, "The proxy's
 * legacy URL parses"). One call from here settles the warning. Deprecation warnings are silenced for that
 * call only: this server calls `url.parse()` nowhere else, so the warning could only have been about it.
 */
export function settleLegacyUrlParseWarning(): void {
  const silenced = process.noDeprecation;
  process.noDeprecation = true;
  try {
    url.parse('/');
  } finally {
    process.noDeprecation = silenced;
  }
}
