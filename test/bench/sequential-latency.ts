// Latency of one request at a time, as a console page makes it: the figures of the IAM and tenant
// benchmarks, and the percentile they and the reconciler's benchmark report.

/** The value below which `p` percent of `values` fall (nearest rank). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const median = (values: number[]): number => percentile(values, 50);

export interface Latency {
  p50: number;
  p99: number;
}

/** One round of `requests` sequential calls, each answered 200 and read whole: p50 and p99 in ms. */
async function round(call: () => Promise<Response>, requests: number): Promise<Latency> {
  const times: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    const res = await call();
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    times.push(performance.now() - started);
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** `rounds` rounds after a warm-up of 20 calls; the medians of the rounds' p50 and p99. */
export async function measureSequential(
  call: () => Promise<Response>,
  options: { requests: number; rounds: number },
): Promise<Latency> {
  for (let i = 0; i < 20; i++) await (await call()).arrayBuffer();
  const rounds: Latency[] = [];
  for (let r = 0; r < options.rounds; r++) rounds.push(await round(call, options.requests));
  return { p50: median(rounds.map((r) => r.p50)), p99: median(rounds.map((r) => r.p99)) };
}

/** Runs `work` over `items`, `size` at a time: seeding without flooding the kube-apiserver. */
export async function inBatches<T>(
  items: T[],
  size: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(work));
}

/**
 * Two subjects measured in the same rounds, one call of each in turn, so that both meet the same
 * machine load: after a warm-up of 20 calls each, the medians of the rounds' p50 and p99 of each.
 */
export async function measureInterleaved(
  calls: [() => Promise<Response>, () => Promise<Response>],
  options: { requests: number; rounds: number },
): Promise<[Latency, Latency]> {
  const timed = async (call: () => Promise<Response>) => {
    const started = performance.now();
    const res = await call();
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i++) for (const call of calls) await timed(call);
  const rounds: [Latency, Latency][] = [];
  for (let r = 0; r < options.rounds; r++) {
    const times: [number[], number[]] = [[], []];
    for (let i = 0; i < options.requests; i++) {
      // Which goes first alternates, so that neither always follows the other's work.
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const k of order) times[k]!.push(await timed(calls[k]!));
    }
    rounds.push(times.map((t) => ({ p50: percentile(t, 50), p99: percentile(t, 99) })) as [Latency, Latency]);
  }
  const of = (k: 0 | 1) => ({
    p50: median(rounds.map((r) => r[k].p50)),
    p99: median(rounds.map((r) => r[k].p99)),
  });
  return [of(0), of(1)];
}
