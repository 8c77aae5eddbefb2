// The same load as load.ts, sent by wrk: a load generator written in C, which is what the figures
// were measured with. On two shared cores the generator's own CPU decides how much is left for the server:
// against a bare node:http server, autocannon reached 26,000-27,000 req/s where wrk with one thread reached
// 39,000-51,000. wrk cannot pace requests, so a fixed `overallRate` stays with autocannon (run-load.ts).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadResult, LoadSpec } from './load.ts';

const ENSURE_COMMAND = fileURLToPath(new URL('../../scripts/ensure-debian-command.sh', import.meta.url));
let wrkPath: string | undefined;

/** The wrk binary, installed from Debian's package on first use when missing. */
function wrkBinary(): string {
  if (wrkPath) return wrkPath;
  const found = spawnSync('bash', [ENSURE_COMMAND, 'wrk', 'wrk'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (found.status !== 0)
    throw new Error('wrk is not available (scripts/ensure-debian-command.sh wrk wrk failed)');
  wrkPath = found.stdout.trim();
  return wrkPath;
}

const luaString = (text: string) => JSON.stringify(text); // a JSON string literal is a valid Lua one here

/**
 * The script: tokens and paths taken in turn (only when given: a Lua `request` function costs wrk time
 * per request), and the summary as one JSON line at the end.
 */
function script(spec: LoadSpec): string {
  const lines: string[] = [];
  const tokens = spec.tokens ?? [];
  const paths = spec.paths ?? [];
  if (tokens.length > 0 || paths.length > 0) {
    lines.push(`local tokens = {${tokens.map(luaString).join(',')}}`);
    lines.push(`local paths = {${paths.map(luaString).join(',')}}`);
    lines.push('local i = 0');
    lines.push('request = function()');
    lines.push('  i = i + 1');
    lines.push(
      '  if #tokens > 0 then wrk.headers["Authorization"] = "Bearer " .. tokens[(i - 1) % #tokens + 1] end',
    );
    lines.push('  local p = wrk.path');
    lines.push('  if #paths > 0 then p = paths[(i - 1) % #paths + 1] end');
    lines.push('  return wrk.format(nil, p)');
    lines.push('end');
  }
  lines.push('done = function(summary, latency, requests)');
  lines.push('  local e = summary.errors');
  lines.push(
    '  io.write(string.format(\'{"requests":%d,"durationUs":%d,"bytes":%d,"socketErrors":%d,"non2xx":%d,"timeouts":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d}\\n\',',
  );
  lines.push(
    '    summary.requests, summary.duration, summary.bytes, e.connect + e.read + e.write, e.status, e.timeout,',
  );
  lines.push('    latency:percentile(50), latency:percentile(99), latency.max))');
  lines.push('end');
  return lines.join('\n') + '\n';
}

interface WrkSummary {
  requests: number;
  durationUs: number;
  bytes: number;
  socketErrors: number;
  non2xx: number;
  timeouts: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
}

/** Runs one load with wrk (one thread, the spec's connections) and resolves with load.ts's result shape. */
export async function runWrk(
  spec: LoadSpec,
  options: { children: ChildProcess[]; cpus?: string | undefined },
): Promise<LoadResult> {
  if (spec.overallRate) throw new Error('wrk cannot pace requests: use autocannon for a fixed rate');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'));
  try {
    const scriptFile = path.join(dir, 'load.lua');
    writeFileSync(scriptFile, script(spec));
    const headers = Object.entries(spec.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    // wrk does not verify the server's certificate: the kube-apiserver's own CA is not needed.
    const command = [
      wrkBinary(),
      '-t1',
      `-c${spec.connections}`,
      `-d${Math.max(1, Math.round(spec.durationSeconds))}s`,
      '--timeout',
      '60s',
      '-s',
      scriptFile,
      ...headers,
      spec.url,
    ];
    const argv = options.cpus ? ['taskset', '-c', options.cpus, ...command] : command;
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    options.children.push(child);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const line = out.split('\n').find((l) => l.startsWith('{"requests"'));
    if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${out}`);
    const s = JSON.parse(line) as WrkSummary;
    const seconds = s.durationUs / 1e6;
    return {
      requestsPerSecond: s.requests / seconds,
      p50Ms: s.p50Us / 1000,
      p99Ms: s.p99Us / 1000,
      maxMs: s.maxUs / 1000,
      requests: s.requests,
      non2xx: s.non2xx,
      errors: s.socketErrors,
      timeouts: s.timeouts,
      bytesPerSecond: s.bytes / seconds,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
