// The benchmarks' way to run the load generator (load.ts) in a process of its own, so that it does not share
// the event loop of the benchmark or of the server under test.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadResult, LoadSpec } from './load.ts';
import { runWrk } from './wrk-load.ts';

const LOAD_TS = fileURLToPath(new URL('./load.ts', import.meta.url));
let specFiles = 0;

/** Which program sends the load: autocannon (load.ts) or wrk (wrk-load.ts). */
export type Loader = 'autocannon' | 'wrk';

/**
 * Runs one load as `spec` says and resolves with its result. The child is pushed to `children` (killed if the
 * benchmark exits first); `cpus`, a taskset list, pins it to those cores. With `loader: 'wrk'`, wrk sends
 * it, except a load at a fixed rate, which only autocannon can pace, and a POST.
 */
export async function runLoad(
  spec: LoadSpec,
  options: { children: ChildProcess[]; cpus?: string | undefined; loader?: Loader },
): Promise<LoadResult> {
  if (options.loader === 'wrk' && !spec.overallRate && spec.postBody === undefined)
    return runWrk(spec, options);
  let arg = JSON.stringify(spec);
  let file: string | undefined;
  if (arg.length > 64 * 1024) {
    // Too long for one command-line argument (a thousand tokens): load.ts reads `@<file>`.
    file = path.join(os.tmpdir(), `bench-load-${process.pid}-${specFiles++}.json`);
    writeFileSync(file, arg);
    arg = `@${file}`;
  }
  const command = [process.execPath, LOAD_TS, arg];
  const argv = options.cpus ? ['taskset', '-c', options.cpus, ...command] : command;
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  options.children.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  if (file) rmSync(file, { force: true });
  return JSON.parse(out) as LoadResult;
}
