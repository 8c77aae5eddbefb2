// Log API benchmark against a real OpenSearch started by the harness: store start-up, export
// throughput and the server's memory while exporting (it must stream, not buffer), and query latency —
// each next to the same work done directly against the store.
//
//   npm run bench:logs                     100,000 lines of 200 bytes
//   npm run bench:logs -- --lines=20000 --queries=100 --heap-mb=32
//
// The API server runs in its own process (test/bench/serve-logs.ts) so its memory is its own.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startOpenSearch } from '../logstore/opensearch.ts';
import { deleteLogs, seedLogs, type LogLine } from '../support/log-documents.ts';
import { exportBody, recordsBody } from '../../src/log-query/store-query.ts';
import { parseLogQuery } from '../../src/log-query/log-query.ts';
import { benchArgs } from './bench-args.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = benchArgs();
const LINES = Number(args.get('lines') ?? 100_000);
const QUERIES = Number(args.get('queries') ?? 200);
const PREFIX = 'bench-logs';
/** Old-space heap limit of the API server process: smaller than the export, so buffering would crash it. */
const HEAP_MB = Number(args.get('heap-mb') ?? 32);

const rssKb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const ms = (n: number) => n.toFixed(1);
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

let t = performance.now();
const node = await startOpenSearch();
console.log(
  `OpenSearch ${node.version}: install check + unzip + start to yellow ${((performance.now() - t) / 1000).toFixed(1)} s`,
);

const start = Date.UTC(2025, 0, 1);
const lines: LogLine[] = Array.from({ length: LINES }, (_, i) => ({
  namespace: `ns-${i % 5}`,
  pod: `app-${i % 50}-7d4b9c8f6-x2k9p`,
  container: 'app',
  timeMs: start + Math.floor((i * 10 * 86_400_000) / LINES),
  log: `${String(i).padStart(8, '0')} ${'level=info msg="request served" '.repeat(5).slice(0, 180)}\n`,
}));
t = performance.now();
await seedLogs(node.url, PREFIX, lines);
console.log(
  `seeded ${LINES} lines over 10 days in ${((performance.now() - t) / 1000).toFixed(1)} s; OpenSearch RSS ${mb(rssKb(node.pid) * 1024)} MiB`,
);

const server = spawn(
  process.execPath,
  [`--max-old-space-size=${HEAP_MB}`, path.join(here, 'serve-logs.ts'), node.url, PREFIX],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const url = await new Promise<string>((resolve) => createInterface(server.stdout).once('line', resolve));
const logsUrl = `${url}/kapis/tenant.platform.io/v1alpha2/logs`;

/** Streams a response, counting bytes and lines, keeping nothing. */
async function drain(res: Response): Promise<{ bytes: number; lines: number }> {
  let bytes = 0;
  let newlines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) newlines++;
  }
  return { bytes, lines: newlines };
}

try {
  await drain(await fetch(`${logsUrl}?operation=export&namespaces=ns-0&end_time=${start / 1000 + 86_400}`)); // warm-up
  // A streaming export holds one page at a time: its memory does not grow with the size of the
  // export. Export a fifth of the lines, then all of them, and compare the server's peak RSS growth.
  const idleRss = rssKb(server.pid!);
  let peakRss = idleRss;
  /** JavaScript heap in use plus memory held outside it (Buffers): what the process itself holds live. */
  const liveBytes = async () => {
    const m = (await (await fetch(`${url}/memory`)).json()) as NodeJS.MemoryUsage;
    return m.heapUsed + m.external;
  };
  const idleLive = await liveBytes();
  let peakLive = idleLive;
  let sampling = true;
  const sampleLive = (async () => {
    while (sampling) peakLive = Math.max(peakLive, await liveBytes());
  })();
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssKb(server.pid!))), 10);
  const fifth = await drain(await fetch(`${logsUrl}?operation=export&namespaces=ns-0`));
  const fifthPeak = peakRss;
  const fifthLive = peakLive;
  t = performance.now();
  const ours = await drain(await fetch(`${logsUrl}?operation=export`));
  const oursSeconds = (performance.now() - t) / 1000;
  clearInterval(sampler);
  sampling = false;
  await sampleLive;

  // The same pages read directly from the store with a scroll cursor (JSON parsed, nothing written).
  const filter = parseLogQuery({}, Math.floor(Date.now() / 1000)).filter;
  t = performance.now();
  let direct = 0;
  let page = (await (
    await fetch(`${node.url}/${PREFIX}-*/_search?scroll=1m`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(exportBody(filter, 'desc', 1000)),
    })
  ).json()) as { _scroll_id: string; hits: { hits: { _source: { log: string } }[] } };
  while (page.hits.hits.length > 0) {
    direct += page.hits.hits.length;
    page = (await (
      await fetch(`${node.url}/_search/scroll`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ scroll: '1m', scroll_id: page._scroll_id }),
      })
    ).json()) as typeof page;
  }
  await fetch(`${node.url}/_search/scroll`, {
    method: 'DELETE',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ scroll_id: page._scroll_id }),
  });
  const directSeconds = (performance.now() - t) / 1000;

  console.log('\nexport of every line (page 1000, sorted by time)');
  console.log(
    `  ours:   ${ours.lines} lines, ${mb(ours.bytes)} MiB in ${oursSeconds.toFixed(2)} s = ${Math.round(ours.lines / oursSeconds)} lines/s`,
  );
  console.log(
    `  direct: ${direct} lines (store scroll, no HTTP response) in ${directSeconds.toFixed(2)} s = ${Math.round(direct / directSeconds)} lines/s`,
  );
  console.log(`  ratio ours/direct time: ${(oursSeconds / directSeconds).toFixed(2)}`);
  console.log(
    `  server, old-space heap limited to ${HEAP_MB} MiB: live memory (heap used + external) idle ${mb(idleLive)} MiB, ` +
      `peak ${mb(fifthLive)} MiB exporting ${mb(fifth.bytes)} MiB, peak ${mb(peakLive)} MiB exporting ${mb(ours.bytes)} MiB ` +
      `(export ${(ours.bytes / fifth.bytes).toFixed(1)}x larger, live peak ${(peakLive / fifthLive).toFixed(2)}x)`,
  );
  console.log(
    `  server RSS: idle ${mb(idleRss * 1024)} MiB, peak ${mb(fifthPeak * 1024)} MiB then ${mb(peakRss * 1024)} MiB ` +
      '(RSS also holds freed memory the allocator has not returned)',
  );

  const timeIt = async (fn: () => Promise<unknown>) => {
    const samples: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const s = performance.now();
      await fn();
      samples.push(performance.now() - s);
    }
    return samples.sort((a, b) => a - b);
  };
  const q = parseLogQuery(
    { namespaces: 'ns-1', log_query: 'request', size: '10' },
    Math.floor(Date.now() / 1000),
  );
  const apiQuery = `${logsUrl}?namespaces=ns-1&log_query=request&size=10`;
  await timeIt(async () => (await fetch(apiQuery)).text()); // warm-up
  const oursQ = await timeIt(async () => (await fetch(apiQuery)).text());
  const directQ = await timeIt(async () =>
    (
      await fetch(`${node.url}/${PREFIX}-*/_search?ignore_unavailable=true`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(recordsBody(q.filter, 'desc', 0, 10)),
      })
    ).text(),
  );
  console.log(`\nquery (namespace + log_query, 10 records), ${QUERIES} sequential requests`);
  console.log(`  ours:   p50 ${ms(pct(oursQ, 0.5))} ms, p95 ${ms(pct(oursQ, 0.95))} ms`);
  console.log(`  direct: p50 ${ms(pct(directQ, 0.5))} ms, p95 ${ms(pct(directQ, 0.95))} ms`);
  console.log(`  ratio ours/direct p50: ${(pct(oursQ, 0.5) / pct(directQ, 0.5)).toFixed(2)}`);
} finally {
  server.kill('SIGKILL');
  await deleteLogs(node.url, PREFIX).catch(() => undefined);
  await node.stop();
}
