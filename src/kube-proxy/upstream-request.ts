import type http from 'node:http';

/** The upstream URL's path without its trailing slash ('' for `https://host:6443`), put before every request's path. */
export function upstreamPathPrefix(target: string): string {
  return new URL(target).pathname.replace(/\/+$/, '');
}

/** The request has a body to stream upstream (a length above zero, or chunks). */
export function carriesBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
