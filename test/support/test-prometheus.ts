import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../cluster/free-port.ts';
import { StopWaiting, waitFor } from '../cluster/wait-for.ts';
import { prometheusPath } from '../tools/prometheus.ts';
import { promtoolPath } from '../tools/promtool.ts';

const run = promisify(execFile);

/** The recording rules the chart ships, which the named metrics read. */
export const RECORDING_RULES = fileURLToPath(
  new URL('../../charts/platform-apiserver/files/monitoring/recording-rules.yaml', import.meta.url),
);

/** The depth of the shipped rules (a rule over a rule over a rule over raw series). */
const RULE_PASSES = 4;

export interface TestPrometheus {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Queries (instant and range) Prometheus has answered since it started. */
  queriesServed(): Promise<number>;
  stop(): Promise<void>;
}

export interface TestPrometheusOptions {
  /** Series as OpenMetrics text (ending `# EOF`), backfilled with `promtool tsdb create-blocks-from openmetrics`. */
  openMetrics: string;
  /**
   * Recording rules evaluated over [start, end] (Unix seconds) against the backfilled series and
   * backfilled too (`promtool tsdb create-blocks-from rules`), then loaded by the server.
   */
  rules?: { file: string; start: number; end: number; evalIntervalSeconds: number; passes?: number };
}

/**
 * A real Prometheus on a free loopback port holding exactly the series given (and the rules' series
 * computed from them): nothing is scraped, so every value a query returns is known in advance. The
 * process is stopped by its PID; its directory is removed.
 */
export async function startTestPrometheus(options: TestPrometheusOptions): Promise<TestPrometheus> {
  const promtool = promtoolPath();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'prometheus-'));
  const data = path.join(dir, 'data');
  try {
    const input = path.join(dir, 'series.om');
    writeFileSync(input, options.openMetrics);
    await run(promtool, ['tsdb', 'create-blocks-from', 'openmetrics', input, data], { maxBuffer: 1 << 24 });
    if (options.rules) {
      // A rule that reads another rule's series sees it only once that series is in a block: one pass
      // per level of the rules' depth (each pass evaluates every rule over what the blocks hold so far;
      // series a later pass records again are the same samples, merged by Prometheus).
      for (let pass = 0; pass < (options.rules.passes ?? RULE_PASSES); pass++) {
        const raw = await startServer(dir, data, []);
        const out = path.join(dir, `rules-blocks-${pass}`);
        try {
          const { start, end, evalIntervalSeconds, file } = options.rules;
          await run(
            promtool,
            [
              'tsdb',
              'create-blocks-from',
              'rules',
              `--url=${raw.url}`,
              `--start=${start}`,
              `--end=${end}`,
              `--eval-interval=${evalIntervalSeconds}s`,
              `--output-dir=${out}`,
              file,
            ],
            { maxBuffer: 1 << 24 },
          );
        } finally {
          await raw.stop();
        }
        for (const block of readdirSync(out)) renameSync(path.join(out, block), path.join(data, block));
      }
    }
    const server = await startServer(dir, data, options.rules ? [options.rules.file] : []);
    return {
      url: server.url,
      queriesServed: () => queriesServed(server.url),
      stop: async () => {
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

interface Running {
  url: string;
  stop(): Promise<void>;
}

async function startServer(dir: string, data: string, ruleFiles: string[]): Promise<Running> {
  const port = await freePort();
  const config = path.join(dir, `prometheus-${port}.yml`);
  writeFileSync(
    config,
    `global:\n  evaluation_interval: 1h\nrule_files:\n${ruleFiles.map((f) => `  - ${JSON.stringify(f)}\n`).join('')}`.replace(
      'rule_files:\n\n',
      'rule_files: []\n',
    ),
  );
  mkdirSync(data, { recursive: true });
  const child: ChildProcess = spawn(
    prometheusPath(),
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${data}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
      // Backfilled blocks may overlap each other and lie ahead of the (empty) head.
      '--storage.tsdb.retention.time=3650d',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      process.off('exit', killOnExit);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (!exited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    }
  };
  try {
    await waitFor(
      'Prometheus to be ready',
      async () => {
        if (exited) throw new StopWaiting(`prometheus exited before it was ready:\n${output}`);
        const res = await fetch(`${url}/-/ready`).catch(() => undefined);
        return res?.ok ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}

/** Instant and range queries answered, from Prometheus' own request counter. */
async function queriesServed(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^prometheus_http_requests_total\{[^}]*handler="\/api\/v1\/query(?:_range)?"[^}]*\} (\d+)/.exec(
      line,
    );
    if (m) total += Number(m[1]);
  }
  return total;
}
