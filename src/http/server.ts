import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from '../observability/logger.ts';
import type { Readiness } from '../kernel/readiness.ts';
import { expressMessageConstructors } from './express-messages.ts';
import { loadTlsMaterial, reloadTlsOnChange, type TlsFiles } from './tls-files.ts';

export interface RunningServer {
  server: http.Server;
  url: string;
  /** Stops accepting connections, lets in-flight requests finish within the grace period, then closes what is left. */
  shutdown(graceMs: number): Promise<void>;
}

export interface ServerOptions {
  host: string;
  port: number;
  requestTimeoutSeconds: number;
  readiness: Readiness;
  logger: Logger;
  /** Serve HTTPS with this certificate (e.g. when no Ingress terminates TLS); plain HTTP otherwise. */
  tls?: TlsFiles;
}

export async function startServer(app: Express, options: ServerOptions): Promise<RunningServer> {
  const serverOptions: http.ServerOptions = {
    // Bounds how long a client may take to send headers/body; responses (watches) are not limited.
    requestTimeout: options.requestTimeoutSeconds * 1000,
    headersTimeout: Math.min(options.requestTimeoutSeconds * 1000, 60_000),
    keepAliveTimeout: 65_000,
    ...expressMessageConstructors(app),
  };
  let stopReloading = () => {};
  let server: http.Server;
  if (options.tls) {
    const secure = https.createServer({ ...serverOptions, ...loadTlsMaterial(options.tls) }, app);
    stopReloading = reloadTlsOnChange(secure, options.tls, options.logger);
    server = secure;
  } else {
    server = http.createServer(serverOptions, app);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${options.tls ? 'https' : 'http'}://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;

  let closing: Promise<void> | undefined;
  const shutdown = (graceMs: number): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      options.readiness.markShuttingDown();
      stopReloading();
      options.logger.info('shutting down: no new connections, waiting for in-flight requests', { graceMs });
      const deadline = setTimeout(() => {
        options.logger.warn('grace period over, closing remaining connections');
        server.closeAllConnections();
      }, graceMs);
      deadline.unref();
      // close() only drops connections idle right now; keep-alive connections whose last request
      // finishes later would hold the process until the deadline, so keep closing idle ones.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      sweep.unref();
      server.close(() => {
        clearTimeout(deadline);
        clearInterval(sweep);
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
  return { server, url, shutdown };
}
