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
