import { readFileSync } from 'node:fs';
import { loadConfig, ConfigError, type Config } from './config/config.ts';
import { loadKubeConfig } from './cluster/kube-config.ts';
import { FirstContact } from './cluster/first-contact.ts';
import { createApp } from './http/app.ts';
import { healthRoutes } from './http/health-routes.ts';
import { Readiness } from './http/readiness.ts';
import { startServer, type RunningServer } from './http/server.ts';
import { exitGracefullyOnSignals } from './http/shutdown-signals.ts';
import { createLogger, createRequestContextStore } from './observability/logger.ts';
import { packageVersion } from './version.ts';

/** Composes the server from its configuration. The only place that wires modules together. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<RunningServer> {
  let config: Config;
  try {
    config = loadConfig({ argv, env, readFile: (p) => readFileSync(p, 'utf8') });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`platform-apiserver: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  const requestContext = createRequestContextStore();
  const logger = createLogger({ level: config.log.level, context: requestContext });
  let kc;
  try {
    kc = loadKubeConfig(config.kubernetes, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      logger.error(err.message, { key: err.key });
      process.stderr.write(`platform-apiserver: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  const readiness = new Readiness();
  const firstContact = new FirstContact(kc, logger);
  readiness.register('kube-apiserver', () => firstContact.reached);
  firstContact.start();

  const app = createApp({
    logger,
    requestContext,
    publicRoutes: [
      healthRoutes(readiness, {
        platform: config.platformName,
        version: packageVersion(),
        node: process.version,
      }),
    ],
    protectedRoutes: [],
  });
  const running = await startServer(app, {
    host: config.http.host,
    port: config.http.port,
    requestTimeoutSeconds: config.http.requestTimeoutSeconds,
    readiness,
    logger,
  });
  logger.info('listening', {
    url: running.url,
    platform: config.platformName,
    kubernetes: kc.getCurrentCluster()?.server,
  });

  exitGracefullyOnSignals(running, {
    graceMs: config.http.shutdownGraceSeconds * 1000,
    logger,
    beforeDrain: () => firstContact.stop(),
  });
  return running;
}

if (import.meta.main) {
  await main(process.argv.slice(2), process.env);
}
