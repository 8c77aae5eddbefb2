import { readFileSync, statSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type https from 'node:https';
import { ConfigError } from '../config/config.ts';
import type { Logger } from '../observability/logger.ts';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
}

/** Reads and checks the serving certificate and key; a bad file is a startup error naming its key. */
export function loadTlsMaterial(files: TlsFiles): TlsMaterial {
  const read = (key: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ConfigError(key, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  };
  const material = {
    cert: read('http.tlsCertFile', files.certFile),
    key: read('http.tlsKeyFile', files.keyFile),
  };
  try {
    createSecureContext(material);
  } catch (err) {
    throw new ConfigError(
      'http.tlsCertFile',
      `certificate and key do not form a usable pair: ${(err as Error).message}`,
    );
  }
  return material;
}

/**
 * Reloads the certificate when its files change (cert-manager and kubelet rotate mounted Secrets in
 * place), without dropping connections. A broken pair is logged and the previous one kept.
 */
export function reloadTlsOnChange(
  server: https.Server,
  files: TlsFiles,
  logger: Logger,
  intervalMs = 30_000,
): () => void {
  const stamp = () => `${statSync(files.certFile).mtimeMs}:${statSync(files.keyFile).mtimeMs}`;
  let last = stamp();
  const timer = setInterval(() => {
    try {
      const now = stamp();
      if (now === last) return;
      last = now;
      server.setSecureContext(loadTlsMaterial(files));
      logger.info('serving certificate reloaded', { certFile: files.certFile });
    } catch (err) {
      logger.error('serving certificate reload failed; keeping the previous one', {
        error: (err as Error).message,
      });
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
