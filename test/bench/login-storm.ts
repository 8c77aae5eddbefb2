// A login storm in its own process: `clients` concurrent password logins, each client starting its next
// login as soon as the last one is answered — honouring Retry-After on a 503, as an OAuth client library
// would. Usage: node test/bench/login-storm.ts '<json StormSpec>'; prints one JSON StormResult line.
import { passwordLogin } from '../support/iam-fixtures.ts';

export interface StormSpec {
  url: string;
  username: string;
  password: string;
  clients: number;
  durationSeconds: number;
}

export interface StormResult {
  seconds: number;
  succeeded: number;
  refused503: number;
  otherFailures: number;
  /** Answer time of the 503s: the refusal must be immediate. */
  refusedP99Ms: number;
  succeededP50Ms: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as StormSpec;
const until = Date.now() + spec.durationSeconds * 1000;
const startedAt = performance.now();
const result = { succeeded: 0, refused503: 0, otherFailures: 0 };
const refusedMs: number[] = [];
const succeededMs: number[] = [];

async function client(): Promise<void> {
  while (Date.now() < until) {
    const t0 = performance.now();
    const res = await passwordLogin(spec.url, spec.username, spec.password).catch(() => undefined);
    const ms = performance.now() - t0;
    if (res?.status === 200) {
      result.succeeded++;
      succeededMs.push(ms);
    } else if (res?.status === 503) {
      result.refused503++;
      refusedMs.push(ms);
      const wait = Number(res.headers.get('retry-after') ?? '1') * 1000;
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, Math.max(0, until - Date.now()))));
    } else {
      result.otherFailures++;
    }
  }
}

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

await Promise.all(Array.from({ length: spec.clients }, client));
const out: StormResult = {
  seconds: (performance.now() - startedAt) / 1000,
  ...result,
  refusedP99Ms: Math.round(percentile(refusedMs, 99)),
  succeededP50Ms: Math.round(percentile(succeededMs, 50)),
};
process.stdout.write(JSON.stringify(out) + '\n');
