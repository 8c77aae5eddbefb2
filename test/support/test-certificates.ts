import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCertificates {
  dir: string;
  caPem: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  cleanup(): void;
}

/**
 * A throw-away CA and a serving certificate for 127.0.0.1/localhost signed by it, made with the
 * machine's openssl at test time (never committed).
 */
export function makeServingCertificate(): TestCertificates {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-tls-'));
  const f = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=platform test CA',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
  );
  openssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    f('tls.key'),
    '-out',
    f('tls.csr'),
  );
  writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    f('tls.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    f('san.ext'),
    '-out',
    f('tls.crt'),
  );
  return {
    dir,
    caPem: readFileSync(f('ca.crt'), 'utf8'),
    caFile: f('ca.crt'),
    certFile: f('tls.crt'),
    keyFile: f('tls.key'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
