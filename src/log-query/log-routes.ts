import { Router, type Request, type Response } from 'express';
import { identityOf } from '../http/request-context.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Logger } from '../observability/logger.ts';
import { authorizeLogRead, type AccessCheck } from './log-access.ts';
import { exportLogs } from './log-export.ts';
import { parseLogQuery, badParameter } from './log-query.ts';
import { searchLogs } from './log-search.ts';
import { LogStoreError, type LogStore } from './log-store.ts';
import type { LoggingMetrics } from './logging-metrics.ts';

export interface ConfiguredLogStore {
  store: LogStore;
  indexPrefix: string;
  exportMaxLines: number;
  /** Seconds a store call may take; named in the 503 when it is exceeded. */
  requestTimeoutSeconds: number;
  /** Lines per store page of an export (the store's scroll page); tests make it small. */
  exportPageSize?: number;
}

export interface LogRoutesDependencies {
  platformName: string;
  /** Undefined when no log store is configured: the endpoint then answers 503 and nothing else is affected. */
  logging: ConfiguredLogStore | undefined;
  check: AccessCheck;
  logger: Logger;
  metrics: LoggingMetrics;
  nowSeconds?: () => number;
}

/** Path of the log query endpoint for a platform name. */
export function logsPath(platformName: string): string {
  return `/kapis/tenant.${platformName}.io/v1alpha2/logs`;
}

/** `GET /kapis/tenant.<domain>/v1alpha2/logs`: query, statistics, histogram and export of container logs. */
export function logRoutes(deps: LogRoutesDependencies): Router {
  const router = Router();
  const nowSeconds = deps.nowSeconds ?? (() => Math.floor(Date.now() / 1000));

  router.get(logsPath(deps.platformName), async (req: Request, res: Response) => {
    const logging = deps.logging;
    if (!logging)
      throw new ApiError('Unavailable', 'logging is not configured: no log store is set (logging.hosts)');
    const query = parseLogQuery(req.query as Record<string, unknown>, nowSeconds());
    const identity = identityOf(req);
    await authorizeLogRead(deps.check, identity, query.filter, deps.logger);

    try {
      if (query.operation === 'export') {
        await exportLogs(res, {
          store: logging.store,
          indexPrefix: logging.indexPrefix,
          filter: query.filter,
          sort: query.sort,
          maxLines: logging.exportMaxLines,
          ...(logging.exportPageSize ? { pageSize: logging.exportPageSize } : {}),
          metrics: deps.metrics,
          logger: deps.logger,
        });
        return;
      }
      const gone = new AbortController();
      const onClose = () => gone.abort();
      res.on('close', onClose);
      try {
        const result = await searchLogs(
          logging.store,
          logging.indexPrefix,
          { ...query, operation: query.operation },
          gone.signal,
        );
        res.json(result);
      } finally {
        res.off('close', onClose);
      }
    } catch (err) {
      if (err instanceof LogStoreError) {
        if (err.failure === 'aborted') return; // the client went away; there is nobody to answer
        throw storeFailure(err, logging.requestTimeoutSeconds, deps.logger);
      }
      throw err;
    }
  });
  return router;
}

/** What a caller is told about a store failure; the store's own words go to the log only. */
function storeFailure(err: LogStoreError, timeoutSeconds: number, logger: Logger): ApiError {
  logger.warn('log store call failed', {
    failure: err.failure,
    storeStatus: err.storeStatus,
    storeErrorTypes: err.storeErrorTypes,
    error: err.message,
  });
  const retry = { retryAfterSeconds: 5 };
  switch (err.failure) {
    case 'timeout':
      return new ApiError('Unavailable', `the log store did not answer within ${timeoutSeconds}s`, retry);
    case 'unavailable':
      return new ApiError('Unavailable', 'the log store is unavailable', retry);
    default:
      if (err.storeStatus === 401 || err.storeStatus === 403)
        return new ApiError(
          'BadGateway',
          "the log store refused this server's credentials (logging.username, logging.password)",
        );
      if (err.storeErrorTypes.includes('too_many_buckets_exception'))
        return badParameter(
          'interval',
          'interval is too small for the time span of the matching logs: choose a larger interval or give start_time',
        );
      return new ApiError('BadGateway', 'the log store could not run the query');
  }
}
