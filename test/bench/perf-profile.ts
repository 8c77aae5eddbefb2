// Where a process's CPU goes by native symbol (V8's runtime and builtins, Node's C++), from Linux perf
// sampling on the cpu-clock (a software event: it works in a VM without a PMU). Used by the start spread
// (BENCH_SPREAD_PERF=DIR) to set a slow process beside a normal one: V8's inline-cache misses and slow
// property lookups show as runtime symbols.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

/** Starts sampling `pid` into `file`; the returned function stops it and resolves once perf has written. */
export function perfRecord(pid: number, file: string, children: ChildProcess[]): () => Promise<void> {
  // BENCH_PERF_CALLGRAPH=1 records call chains too: with the server's BENCH_NODE_FLAGS=--perf-basic-prof,
  // `perf report -g caller` then names the JavaScript functions that run into the megamorphic lookups.
  const callGraph = process.env['BENCH_PERF_CALLGRAPH'] === '1' ? ['-g'] : [];
  const perf = spawn(
    'perf',
    ['record', '-q', ...callGraph, '-e', 'cpu-clock', '-F', '999', '-p', String(pid), '-o', file],
    { stdio: 'ignore' },
  );
  children.push(perf);
  const exited = new Promise<void>((resolve) => perf.once('exit', () => resolve()));
  return async () => {
    perf.kill('SIGINT');
    await exited;
  };
}

/** Symbols that mean V8 missed its inline caches or looked a property up the slow way. */
export const IC_MISS_SYMBOL =
  /IC_Miss|LoadIC_Megamorphic|KeyedLoadIC_Megamorphic|StoreIC_Megamorphic|LookupIterator|MakePrototypesFast|Runtime_SetPrototype|TransitionsAccessor|Map::Transition|Map::CopyForPrototype|JSObject::OptimizeAsPrototype/;

/** Percent of the samples by symbol (perf report), highest first. */
export function perfSymbols(file: string): { symbol: string; percent: number }[] {
  const report = spawnSync(
    'perf',
    ['report', '-i', file, '--stdio', '--no-children', '--sort', 'sym', '-q', '--percent-limit', '0.05'],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const rows: { symbol: string; percent: number }[] = [];
  for (const line of report.stdout.split('\n')) {
    const match = /^\s*([\d.]+)%\s+\[[.kj]\]\s+(.+?)\s*$/.exec(line);
    if (match) rows.push({ percent: Number(match[1]), symbol: match[2]! });
  }
  return rows;
}
