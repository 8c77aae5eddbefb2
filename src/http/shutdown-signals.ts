import type { Logger } from '../observability/logger.ts';
import type { RunningServer } from './server.ts';

/**
 * On SIGTERM or SIGINT: stop background work, drain the HTTP server within the grace period, flush
 * the log and exit 0. A second signal exits at once.
 */
export function exitGracefullyOnSignals(
  running: RunningServer,
  options: { graceMs: number; logger: Logger; beforeDrain?: () => void },
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
    options.beforeDrain?.();
    void running.shutdown(options.graceMs).then(() => {
      logger.info('stopped');
      logger.on('finish', () => process.exit(0));
      logger.end();
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
