// Latency probes, run as their own process: GETs sent at a fixed, even pace (request i of a target at
// start + i ÷ rate), each timed from its send to the end of its answer in microseconds. This is what the
// login storm's "p99 within 2× of baseline" needs. autocannon's rate mode does not measure that: it sends each
// second's quota as fast as it can at the start of the second. It also corrects for coordinated omission with an
// expected interval rounded up to 1 ms, which adds made-up samples to every answer slower than 1 ms, and it
// keeps whole milliseconds.
// The targets take turns: target k of K is offset by k/K of the shortest period, so with rates that divide
// the highest one no two targets are ever due at the same moment; when the probe runs late, the requests it
// owes go out in the order they were due. When every target's requests were due together and sent in the
// listed order, two identical bare servers read 1.13-1.80 against each other in a login storm (p99 ratios,
// 5 runs): the target listed first, the measured one, paid for its place in the batch (likely its server,
// woken first, waited for the core the probe kept while it sent the rest).
// Usage: node test/bench/paced-probe.ts '<json ProbeSpec>'; prints one JSON ProbeResult line.
import http from 'node:http';

export interface ProbeTarget {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** Requests per second, evenly spaced. */
  rate: number;
}

export interface ProbeSpec {
  targets: ProbeTarget[];
  durationSeconds: number;
}

export interface ProbeFigures {
  requests: number;
  /** Answers other than 2xx, and requests that failed outright; neither counts in the latencies. */
  failed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** How late the probe itself sent, p99: a busy probe would blame the server for its own delay. */
  sendLateP99Ms: number;
}

export type ProbeResult = Record<string, ProbeFigures>;

const spec = JSON.parse(process.argv[2] ?? '{}') as ProbeSpec;
// Enough sockets that a request never waits for one: queueing in the probe would hide the server's latency.
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

interface Tally {
  target: ProbeTarget;
  /** This target's offset in µs: its requests fall between the other targets'. */
  offsetUs: number;
  url: URL;
  sent: number;
  latenciesUs: number[];
  lateUs: number[];
  failed: number;
}

function send(tally: Tally, dueUs: number, nowUs: number): Promise<void> {
  tally.lateUs.push(nowUs - dueUs);
  const t0 = process.hrtime.bigint();
  return new Promise((resolve) => {
    const req = http.get(
      {
        host: tally.url.hostname,
        port: tally.url.port,
        path: tally.url.pathname + tally.url.search,
        headers: tally.target.headers ?? {},
        agent,
      },
      (res) => {
        res.resume();
        res.once('end', () => {
          if (res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300)
            tally.latenciesUs.push(Number(process.hrtime.bigint() - t0) / 1000);
          else tally.failed++;
          resolve();
        });
      },
    );
    req.once('error', () => {
      tally.failed++;
      resolve();
    });
  });
}

const shortestPeriodUs = 1e6 / Math.max(...spec.targets.map((t) => t.rate));
const tallies: Tally[] = spec.targets.map((target, k) => ({
  target,
  offsetUs: (k * shortestPeriodUs) / spec.targets.length,
  url: new URL(target.url),
  sent: 0,
  latenciesUs: [],
  lateUs: [],
  failed: 0,
}));
const nowUs = () => performance.now() * 1000;
const startUs = nowUs();
const endUs = startUs + spec.durationSeconds * 1e6;
const inFlight: Promise<void>[] = [];
const dueOf = (t: Tally) => startUs + t.offsetUs + (t.sent * 1e6) / t.target.rate;
/** The target whose next request is due first. */
const earliest = () => tallies.reduce((a, b) => (dueOf(b) < dueOf(a) ? b : a));

await new Promise<void>((done) => {
  const tick = () => {
    const now = nowUs();
    // Whatever is owed goes out in the order it was due, whichever target it belongs to.
    for (let t = earliest(); dueOf(t) <= now && dueOf(t) < endUs; t = earliest()) {
      inFlight.push(send(t, dueOf(t), now));
      t.sent++;
    }
    const next = dueOf(earliest());
    if (next >= endUs) done();
    else setTimeout(tick, Math.max(0, (next - nowUs()) / 1000));
  };
  tick();
});
await Promise.all(inFlight);
agent.destroy();

const percentileMs = (valuesUs: number[], p: number): number => {
  if (valuesUs.length === 0) return 0;
  const sorted = [...valuesUs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! / 1000;
};
const result: ProbeResult = Object.fromEntries(
  tallies.map((t) => [
    t.target.name,
    {
      requests: t.sent,
      failed: t.failed,
      p50Ms: percentileMs(t.latenciesUs, 50),
      p99Ms: percentileMs(t.latenciesUs, 99),
      maxMs: percentileMs(t.latenciesUs, 100),
      sendLateP99Ms: percentileMs(t.lateUs, 99),
    },
  ]),
);
process.stdout.write(JSON.stringify(result) + '\n');
