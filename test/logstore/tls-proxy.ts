import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../cluster/free-port.ts';
import { StopWaiting, waitFor } from '../cluster/wait-for.ts';
import { nginxBinary } from '../support/nginx.ts';

/**
 * A real nginx in front of the log store, the way production OpenSearch is usually reached: TLS with
 * a certificate signed by a CA generated for the test, and HTTP basic auth. (The OpenSearch test
 * distribution has no security plugin, so TLS and auth are the proxy's job here.)
 */
export interface TlsProxy {
  /** https://127.0.0.1:<port> */
  url: string;
  /** Path of the PEM file of the CA that signed the proxy's certificate. */
  caFile: string;
  username: string;
  password: string;
  stop(): Promise<void>;
}

function openssl(args: string[], cwd: string): string {
  try {
    return execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new Error(`openssl ${args[0]} failed (is openssl installed?): ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** A throw-away CA and a server certificate for 127.0.0.1 and localhost, made with openssl. */
function makeCertificates(dir: string): void {
  openssl(
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=logstore-test-ca'].concat([
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
    ]),
    dir,
  );
  openssl(
    [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
    ],
    dir,
  );
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
    ].concat(['-extfile', 'san.ext', '-out', 'server.crt']),
    dir,
  );
}

/** Starts nginx on a free loopback port: TLS, basic auth (credentials generated), proxy to `upstream`. */
export async function startTlsProxy(upstream: string): Promise<TlsProxy> {
  const binary = nginxBinary();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'logstore-proxy-'));
  const username = 'logreader';
  const password = randomBytes(18).toString('base64url');
  makeCertificates(dir);
  // SHA-512 crypt, which nginx checks through the C library's crypt().
  const hash = execFileSync('openssl', ['passwd', '-6', '-stdin'], {
    input: `${password}\n`,
    encoding: 'utf8',
  });
  writeFileSync(path.join(dir, 'htpasswd'), `${username}:${hash.trim()}\n`);
  const port = await freePort();
  const target = new URL(upstream);
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `
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
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${dir}/server.crt;
    ssl_certificate_key ${dir}/server.key;
    location / {
      auth_basic "log store";
      auth_basic_user_file ${dir}/htpasswd;
      proxy_pass http://${target.host};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "";
    }
  }
}
`,
  );
  const child = spawn(
    binary,
    ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
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
      'nginx (TLS proxy) to accept connections',
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
  return { url: `https://127.0.0.1:${port}`, caFile: path.join(dir, 'ca.crt'), username, password, stop };
}
