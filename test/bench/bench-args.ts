import type { ChildProcess } from 'node:child_process';

/** `--key=value` flags as a map; a bare `--flag` is `'true'`. The benchmarks' whole command line. */
export function benchArgs(argv: readonly string[] = process.argv.slice(2)): Map<string, string> {
  return new Map(
    argv.map((a) => {
      const [k, v] = a.replace(/^--/, '').split('=');
      return [k!, v ?? 'true'] as const;
    }),
  );
}

/** A list the benchmark pushes its child processes to; whatever still runs is killed when it exits. */
export function childrenKilledOnExit(): ChildProcess[] {
  const children: ChildProcess[] = [];
  process.on('exit', () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });
  return children;
}
