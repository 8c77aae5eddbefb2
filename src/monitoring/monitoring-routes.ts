import { Router, type Request, type Response } from 'express';
import { NAMED_METRICS_PATHS, TARGET_PATHS, WORKSPACE_STATISTICS } from './monitoring-paths.ts';
import {
  NOT_CONFIGURED,
  requestedMetrics,
  singleParameter,
  unconfiguredAnswer,
} from './unconfigured-metrics.ts';
import type { PlatformStatistics } from './platform-statistics.ts';

/** `/kapis/monitoring.<p>.io/v1alpha3` */
export function monitoringApiPath(platformName: string): string {
  return `/kapis/monitoring.${platformName}.io/v1alpha3`;
}

/**
 * The original's monitoring API while this server has no metrics backend: 200 with every requested
 * metric present and carrying an error that says so — the shape the original answers when its backend
 * fails — so that the console shows empty charts instead of an error toast. The answers hold no cluster
 * data, so a valid bearer token is all they require.
 */
export function monitoringRoutes(platformName: string, statistics: PlatformStatistics): Router {
  const base = monitoringApiPath(platformName);
  const router = Router();
  const send = (res: Response, body: unknown) => res.set('Cache-Control', 'no-store').json(body);

  const named = (req: Request, res: Response) => {
    const filter = singleParameter(req.query, 'metrics_filter');
    if (req.path.startsWith(`${base}/workspaces`) && singleParameter(req.query, 'type') === 'statistics') {
      send(res, unconfiguredAnswer(WORKSPACE_STATISTICS));
      return;
    }
    send(res, unconfiguredAnswer(requestedMetrics(filter)));
  };
  for (const path of NAMED_METRICS_PATHS) router.get(`${base}${path}`, named);
  router.get(`${base}/kubesphere`, async (_req, res) => {
    send(res, { results: await statistics.metrics(Math.floor(Date.now() / 1000)) });
  });
  for (const path of [...TARGET_PATHS.metadata, ...TARGET_PATHS.labelsets])
    router.get(`${base}${path}`, (_req, res) => send(res, { data: [] }));
  for (const path of TARGET_PATHS.query)
    router.get(`${base}${path}`, (_req, res) => send(res, { data: {}, error: NOT_CONFIGURED }));
  return router;
}
