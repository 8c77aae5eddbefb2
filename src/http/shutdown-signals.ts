import type { Logger } from '../observability/logger.ts';
import type { RunningServer } from './server.ts';

/**
 * On SIGTERM or SIGINT: stop background work, drain the HTTP server within the grace period, flush
 * the log and exit 0. The exit also waits (within the same grace period) for the background work to
 * have stopped, e.g. a leader lease to be released. A second signal exits at once.
 */
export function exitGracefullyOnSignals(
  running: RunningServer,
  options: { graceMs: number; logger: Logger; beforeDrain?: () => void | Promise<void> },
): void {
  const { logger } = options;
  let draining = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (draining) {
      logger.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    draining = true;
    logger.info('signal received', { signal });
    const background = Promise.resolve(options.beforeDrain?.()).catch((err: unknown) =>
      logger.warn('background work failed to stop', { error: String(err) }),
    );
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.graceMs)));
    const backgroundStopped = Promise.race([background, graceOver]).finally(() => clearTimeout(timer));
    void Promise.all([running.shutdown(options.graceMs), backgroundStopped]).then(() => {
      logger.info('stopped');
      logger.on('finish', () => process.exit(0));
      logger.end();
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
