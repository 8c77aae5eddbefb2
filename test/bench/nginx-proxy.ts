// The proxy's control: nginx as a reverse proxy to the same kube-apiserver, with the credential our server
// uses (the kubeconfig's bearer token), the same static impersonation headers and kept-alive upstream
// connections. One process (no master), one worker: one event loop, as our server has. nginx comes from
// Debian's package, installed with apt-get on first use when missing (scripts/ensure-debian-command.sh).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ENSURE_COMMAND = fileURLToPath(new URL('../../scripts/ensure-debian-command.sh', import.meta.url));

/** The nginx binary, installed from Debian's package when missing. */
function nginxBinary(): string {
  const found = spawnSync('bash', [ENSURE_COMMAND, 'nginx', 'nginx'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (found.status !== 0)
    throw new Error('nginx is not available (scripts/ensure-debian-command.sh nginx nginx failed)');
  return found.stdout.trim();
}

export interface NginxProxy {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** A free loopback port, for nginx's `listen` (it cannot report one it picked). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The name nginx checks the kube-apiserver's certificate against. nginx matches DNS names only, so for an IP
 * address it checks `kubernetes`, a name every kube-apiserver's serving certificate carries.
 */
const tlsName = (host: string) => (net.isIP(host.replace(/^\[(.*)\]$/, '$1')) ? 'kubernetes' : host);

/** nginx's configuration: a quoted string must not end its directive early. */
const quoted = (value: string) => `"${value.replace(/["\\$;]/g, '')}"`;

export async function startNginxProxy(options: {
  /** The kube-apiserver's URL (https://127.0.0.1:PORT). */
  upstream: string;
  caFile: string;
  token: string;
  user: string;
  group: string;
  /** Where its configuration, pid and error log go (the control plane's directory: private). */
  dir: string;
  children: ChildProcess[];
}): Promise<NginxProxy> {
  const port = await freePort();
  const upstream = new URL(options.upstream);
  const conf = path.join(options.dir, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
master_process off;
worker_processes 1;
pid ${options.dir}/nginx.pid;
error_log ${options.dir}/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${options.dir}/nginx-body;
  proxy_temp_path ${options.dir}/nginx-proxy;
  upstream kube { server ${upstream.host}; keepalive 32; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass https://kube;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host ${upstream.host};
      proxy_set_header Authorization ${quoted(`Bearer ${options.token}`)};
      proxy_set_header Impersonate-User ${quoted(options.user)};
      proxy_set_header Impersonate-Group ${quoted(options.group)};
      proxy_ssl_trusted_certificate ${options.caFile};
      proxy_ssl_verify on;
      proxy_ssl_name ${tlsName(upstream.hostname)};
      proxy_ssl_session_reuse on;
    }
  }
}
`,
    { mode: 0o600 },
  );
  const child = spawn(nginxBinary(), ['-p', options.dir, '-c', conf], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  options.children.push(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const failed = new Promise<never>((_, reject) =>
    child.once('error', (err) => reject(new Error(`nginx did not start: ${err.message}`))),
  );
  // Raced below while nginx starts; a later error is the exit the benchmark already sees.
  failed.catch(() => {});
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`nginx exited with ${child.exitCode}; see ${options.dir}/nginx-error.log`);
    const listening = await Promise.race([
      failed,
      new Promise<boolean>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
        socket.once('error', () => resolve(false));
      }),
    ]);
    if (listening) break;
    if (Date.now() > deadline) throw new Error('nginx did not listen within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
