import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { StopWaiting, waitFor } from '../cluster/wait-for.ts';

export interface ServerProcess {
  /** http://127.0.0.1:<port> */
  url: string;
  child: ChildProcess;
  /** Every line the server wrote to stdout and stderr so far. */
  output(): string[];
  /** Parsed JSON log lines (stdout). */
  logs(): Record<string, unknown>[];
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

const mainTs = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/**
 * Runs the real server (src/main.ts under the current node) on a free port and waits until it
 * listens. `args` are its flags; `--http.port=0 --http.host=127.0.0.1` are added unless given.
 */
export async function startServerProcess(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; entry?: string; startTimeoutMs?: number } = {},
): Promise<ServerProcess> {
  const withDefaults = [
    ...(args.some((a) => a.startsWith('--http.port')) ? [] : ['--http.port=0']),
    ...(args.some((a) => a.startsWith('--http.host')) ? [] : ['--http.host=127.0.0.1']),
    ...args,
  ];
  const child = spawn(process.execPath, [options.entry ?? mainTs, ...withDefaults], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const collect = (json: boolean) => {
    let partial = '';
    return (chunk: Buffer) => {
      const text = partial + chunk.toString('utf8');
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (json) {
          try {
            logs.push(JSON.parse(line) as Record<string, unknown>);
          } catch {
            /* not a log line */
          }
        }
      }
    };
  };
  child.stdout.on('data', collect(true));
  child.stderr.on('data', collect(false));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));

  const url = await waitFor(
    'server to listen',
    () => {
      if (exitCode !== undefined)
        throw new StopWaiting(`server exited (${exitCode}) before listening:\n${lines.join('\n')}`);
      const listening = logs.find((l) => l['message'] === 'listening');
      return listening ? String(listening['url']) : undefined;
    },
    { timeoutMs: options.startTimeoutMs ?? 60_000 },
  ).catch((err: Error) => {
    child.kill('SIGKILL');
    throw err;
  });

  return {
    url,
    child,
    output: () => [...lines],
    logs: () => [...logs],
    exited,
    async stop(graceMs = 5000) {
      if (exitCode !== undefined) return exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
