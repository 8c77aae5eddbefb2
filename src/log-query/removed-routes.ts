import { Router } from 'express';
import { servedUnder } from '../http/path-guard.ts';
import { ApiError } from '../kernel/api-error.ts';
import { logsPath } from './log-routes.ts';

/**
 * The logging API group `logging.<domain>` is gone (platform 3.3/3.4, spec 4.3): its workspace,
 * namespace, workload and pod log endpoints and the whole log-setting API (`fluentbit/outputs…`).
 * Every path of the group, whatever the method, answers 404 saying so and where to go instead.
 */
export function removedLoggingRoutes(platformName: string): Router {
  const router = Router();
  const group = `logging.${platformName}.io`;
  const message =
    `the ${group} API group was removed: its workspace, namespace, workload and pod log endpoints and ` +
    `its log-setting API no longer exist. Query logs with GET ${logsPath(platformName)}; ` +
    'log collection is configured through the log-collection operator, not through this server';
  // A mounted middleware, not a route: every method and every path under the group, nothing else
  // (`/kapis/logging.<domain>x` is another, unknown group).
  router.use(`/kapis/${group}`, () => {
    throw new ApiError('NotFound', message, { details: { group } });
  });
  return servedUnder(router, [`/kapis/${group}`]);
}
