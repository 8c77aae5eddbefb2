import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../cluster/free-port.ts';
import { StopWaiting, waitFor } from '../cluster/wait-for.ts';

export interface ReverseProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  stop(): Promise<void>;
}

export interface ReverseProxyOptions {
  /** Where requests go, e.g. http://127.0.0.1:9090 */
  upstream: string;
  /** Source address of nginx's connections to the upstream (`proxy_bind`): what the server sees as the proxy. */
  bindAddress: string;
}

const ensureScript = fileURLToPath(new URL('../../scripts/ensure-nginx.sh', import.meta.url));

/** Path of Debian's nginx; scripts/ensure-nginx.sh installs it when missing and fails loudly when it cannot. */
export function nginxBinary(): string {
  return execFileSync('bash', [ensureScript], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** A running nginx: its loopback port and private dir (config, logs, temp files). */
export interface RunningNginx {
  port: number;
  dir: string;
  stop(): Promise<void>;
}

/**
 * Runs Debian's nginx in the foreground as one process on a free loopback port, with every path (pid,
 * logs, temp files) in its own temp dir. `serverBlock` is the `server { … }` part of the config, given
 * the port to listen on and that dir (for certificates and password files it writes first via `prepare`).
 */
export async function runNginx(
  serverBlock: (port: number, dir: string) => string,
  prepare: (dir: string) => void = () => {},
): Promise<RunningNginx> {
  const binary = nginxBinary();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nginx-'));
  const port = await freePort();
  prepare(dir);
  const config = `
daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${serverBlock(port, dir)}
}
`;
  const configPath = path.join(dir, 'nginx.conf');
  writeFileSync(configPath, config);
  // -e: the startup error log, before the config is read, goes to the temp dir too (not /var/log).
  const child = spawn(binary, ['-p', dir, '-c', configPath, '-e', path.join(dir, 'error.log')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  // Last line of defence: a test process that dies without stop() must not leave nginx running.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.off('exit', killOnExit);
      resolve();
    }),
  );
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const errorLog = () => {
    try {
      return readFileSync(path.join(dir, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  };

  const stop = async () => {
    if (!hasExited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitFor(
      'nginx to accept connections',
      () => {
        if (hasExited) throw new StopWaiting(`nginx exited before listening:\n${output}${errorLog()}`);
        return new Promise<true | undefined>((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () => {
            socket.destroy();
            resolve(true);
          });
          socket.once('error', () => resolve(undefined));
        });
      },
      { timeoutMs: 10_000 },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, dir, stop };
}

/**
 * A real nginx reverse proxy configured the way Ingress controllers forward: it appends the client's
 * address to X-Forwarded-For.
 */
export async function startNginx(options: ReverseProxyOptions): Promise<ReverseProxy> {
  const upstream = new URL(options.upstream);
  const nginx = await runNginx(
    (port) => `
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://${upstream.host};
      proxy_bind ${options.bindAddress};
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }`,
  );
  return { url: `http://127.0.0.1:${nginx.port}`, stop: nginx.stop };
}
