import type { ServerResponse } from 'node:http';

/**
 * Sends a JSON body already serialised, with the headers `res.set('Cache-Control', 'no-store').json()`
 * would send, without Express serialising it again.
 */
export function sendJsonBytes(res: ServerResponse, body: Buffer): void {
  res.statusCode = 200;
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}
