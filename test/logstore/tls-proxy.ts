import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { runNginx } from '../support/nginx.ts';
import { makeServingCertificate } from '../support/test-certificates.ts';

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

/** Starts nginx on a free loopback port: TLS, basic auth (credentials generated), proxy to `upstream`. */
export async function startTlsProxy(upstream: string): Promise<TlsProxy> {
  const username = 'logreader';
  const password = randomBytes(18).toString('base64url');
  const tls = makeServingCertificate();
  const target = new URL(upstream);
  try {
    const nginx = await runNginx(
      (port, dir) => `
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${tls.certFile};
    ssl_certificate_key ${tls.keyFile};
    location / {
      auth_basic "log store";
      auth_basic_user_file ${dir}/htpasswd;
      proxy_pass http://${target.host};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "";
    }
  }`,
      (dir) => {
        // SHA-512 crypt, which nginx checks through the C library's crypt().
        const hash = execFileSync('openssl', ['passwd', '-6', '-stdin'], {
          input: `${password}\n`,
          encoding: 'utf8',
        });
        writeFileSync(path.join(dir, 'htpasswd'), `${username}:${hash.trim()}\n`);
      },
    );
    const stop = async () => {
      await nginx.stop();
      tls.cleanup();
    };
    return { url: `https://127.0.0.1:${nginx.port}`, caFile: tls.caFile, username, password, stop };
  } catch (err) {
    tls.cleanup();
    throw err;
  }
}
