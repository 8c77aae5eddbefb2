import { readFileSync } from 'node:fs';
import { accessReviewerRef } from '../access/access-module.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { configRef, loggerRef, registryRef } from '../host-services.ts';
import { packageVersion } from '../version.ts';
import { configuredLogStore } from './configured-store.ts';
import { logRoutes } from './log-routes.ts';
import { createLoggingMetrics } from './logging-metrics.ts';
import { logsApi } from './logs-api.ts';
import { removedLoggingRoutes } from './removed-routes.ts';

/** The container-log query API over the log store (answers 503 while no store is configured). */
export const logQueryModule: FeatureModule = {
  name: 'log-query',
  requires: [configRef, loggerRef, registryRef, accessReviewerRef],
  register(ctx) {
    const config = ctx.get(configRef);
    const metrics = createLoggingMetrics(ctx.get(registryRef));
    const logging = configuredLogStore(config.logging, { metrics, readFile: (p) => readFileSync(p, 'utf8') });
    const reviewer = ctx.get(accessReviewerRef);
    return {
      edge: {
        protectedRoutes: [
          logRoutes({
            platformName: config.platformName,
            logging,
            check: (identity, attributes) => reviewer.check(identity, attributes),
            logger: ctx.get(loggerRef),
            metrics,
          }),
          removedLoggingRoutes(config.platformName),
        ],
        openApi: [logsApi({ platformName: config.platformName, version: packageVersion() })],
      },
      summary: { logStore: logging ? config.logging.hosts : 'not configured' },
    };
  },
};
