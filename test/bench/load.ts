// Load generator, run as its own process so it does not share a CPU core's event loop with the server
// under test. Usage: node test/bench/load.ts '<json LoadSpec>' | @<file>; prints one JSON LoadResult line.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  headers?: Record<string, string>;
  connections: number;
  durationSeconds: number;
  /** PEM of a CA to trust (the kube-apiserver's self-signed certificate). */
  caPem?: string;
  /** Fixed request rate across all connections; unset means as fast as the server answers. */
  overallRate?: number;
  /** Bearer tokens used in turn, one per request (overrides an Authorization header). */
  tokens?: string[];
  /** Paths (with query) sent in turn on each connection instead of the URL's path: a request mix. */
  paths?: string[];
  /** A POST of this body (with its content type in `headers`) instead of a GET: a login, for instance. */
  postBody?: string;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  bytesPerSecond: number;
}

// `@<file>`: the spec in a file (a thousand tokens do not fit in one command-line argument).
const arg = process.argv[2] ?? '{}';
const spec = JSON.parse(arg.startsWith('@') ? readFileSync(arg.slice(1), 'utf8') : arg) as LoadSpec;
const tokens = spec.tokens ?? [];
let nextToken = 0;
const withToken = (req: autocannon.Request): autocannon.Request =>
  tokens.length === 0
    ? req
    : {
        ...req,
        headers: { ...req.headers, authorization: `Bearer ${tokens[nextToken++ % tokens.length]}` },
      };
const requests = (spec.paths ?? [new URL(spec.url).pathname + new URL(spec.url).search]).map((path) => ({
  path,
  setupRequest: withToken,
  ...(spec.postBody === undefined
    ? { method: 'GET' as const }
    : { method: 'POST' as const, body: spec.postBody }),
}));
const result = await autocannon({
  url: spec.url,
  requests,
  headers: spec.headers ?? {},
  connections: spec.connections,
  duration: spec.durationSeconds,
  timeout: 60,
  ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
  ...(spec.caPem ? { tlsOptions: { ca: spec.caPem } } : {}),
});
const out: LoadResult = {
  requestsPerSecond: result.requests.average,
  p50Ms: result.latency.p50,
  p99Ms: result.latency.p99,
  maxMs: result.latency.max,
  requests: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  bytesPerSecond: result.throughput.average,
};
process.stdout.write(JSON.stringify(out) + '\n');
