// Express's ceiling: an Express app with one route answering the node page's path with the same prebuilt
// bytes and the same response headers as ours, and nothing else (no authentication, authorization,
// metrics or access log). Beside bare-server.ts (the wire's ceiling) it shows what Express itself costs a
// request on this machine, before any of the server's own work.
// Usage: node test/bench/bare-express.ts <file with the body>; prints its URL on stdout.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import express from 'express';

const body = readFileSync(process.argv[2]!);
const app = express();
// As src/http/app.ts sets them.
app.disable('x-powered-by');
app.set('etag', false);
app.set('query parser', 'simple');
app.get('/kapis/resources.platform.io/v1alpha3/nodes', (_req, res) => {
  res.setHeader('X-Request-Id', 'bench');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('ETag', '"bench"');
  res.setHeader('Cache-Control', 'private, no-cache');
  res.setHeader('Vary', 'Accept-Encoding');
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', body.length);
  res.end(body);
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
server.keepAliveTimeout = 65_000;
