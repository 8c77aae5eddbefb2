import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StopWaiting, waitFor } from '../cluster/wait-for.ts';
import type { ConsoleBuild } from './console-build.ts';

export interface ConsoleProcess {
  url: string;
  stop(): Promise<void>;
}

/**
 * Configures the built console (server/local_config.yaml: its port, our server as apiServer, the OAuth
 * client `kubesphere`/`kubesphere`) and runs its Koa server under Node 14 until it listens.
 */
export async function startConsole(
  build: ConsoleBuild,
  options: { port: number; apiServerUrl: string; logFile: string },
): Promise<ConsoleProcess> {
  const ws = options.apiServerUrl.replace(/^http/, 'ws');
  writeFileSync(
    join(build.dir, 'server', 'local_config.yaml'),
    [
      'server:',
      '  http:',
      `    port: ${options.port}`,
      '  apiServer:',
      `    url: ${options.apiServerUrl}`,
      `    wsUrl: ${ws}`,
      '    clientID: kubesphere',
      '    clientSecret: kubesphere',
      '',
    ].join('\n'),
  );
  const out = createWriteStream(options.logFile);
  const child: ChildProcess = spawn(build.toolchain.node, ['server/server.js'], {
    cwd: build.dir,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PATH: `${build.toolchain.nodeBinDir}:${process.env.PATH ?? ''}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      out.write(chunk);
    });
  }
  const stop = async () => {
    if (exited === undefined) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    }
    out.end();
  };
  try {
    await waitFor(
      'the console to listen',
      () => {
        if (exited !== undefined) throw new StopWaiting(`the console exited (${exited}):\n${output}`);
        return output.includes('Dashboard app running at port') ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `http://127.0.0.1:${options.port}`, stop };
}
