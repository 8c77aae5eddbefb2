// The log API over a given store, for the log benchmark: the real routes, store client and export,
// with every caller treated as a cluster admin (the benchmark measures the store path, not RBAC), and
// GET /memory (process.memoryUsage()) for the benchmark to sample.
// Prints its URL on stdout once listening.
//   node test/bench/serve-logs.ts <store url> <index prefix>
import { Writable } from 'node:stream';
import { Router } from 'express';
import { Registry } from 'prom-client';
import { setIdentity } from '../../src/http/request-context.ts';
import { createApp } from '../../src/http/app.ts';
import { startServer } from '../../src/http/server.ts';
import { Readiness } from '../../src/kernel/readiness.ts';
import { configuredLogStore } from '../../src/log-query/configured-store.ts';
import { logRoutes } from '../../src/log-query/log-routes.ts';
import { createLoggingMetrics } from '../../src/log-query/logging-metrics.ts';
import { createLogger, createRequestContextStore } from '../../src/observability/logger.ts';

const [storeUrl, indexPrefix] = process.argv.slice(2);
if (!storeUrl || !indexPrefix) throw new Error('usage: serve-logs.ts <store url> <index prefix>');
const logger = createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) });
const metrics = createLoggingMetrics(new Registry());
const logging = configuredLogStore(
  {
    hosts: [storeUrl],
    username: '',
    password: '',
    tls: { caFile: '', insecureSkipVerify: false },
    indexPrefix,
    requestTimeoutSeconds: 30,
    exportMaxLines: 10_000_000,
  },
  { metrics, readFile: () => '' },
);
const app = createApp({
  logger,
  requestContext: createRequestContextStore(),
  // The process's own view of its memory, sampled by the benchmark while an export runs.
  publicRoutes: [Router().get('/memory', (_req, res) => void res.json(process.memoryUsage()))],
  authenticate: (_req, res, next) => {
    setIdentity(res, { username: 'bench', groups: ['system:masters'] });
    next();
  },
  protectedRoutes: [
    logRoutes({ platformName: 'platform', logging, check: async () => ({ allowed: true }), logger, metrics }),
  ],
});
const running = await startServer(app, {
  host: '127.0.0.1',
  port: 0,
  requestTimeoutSeconds: 60,
  readiness: new Readiness(),
  logger,
});
process.stdout.write(`${running.url}\n`);
