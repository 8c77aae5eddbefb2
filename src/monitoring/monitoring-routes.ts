import { Router, type Request, type Response } from 'express';
import { identityOf } from '../http/request-context.ts';
import type { Identity } from '../kernel/identity.ts';
import { NAMED_METRICS_PATHS, TARGET_PATHS, WORKSPACE_STATISTICS } from './monitoring-paths.ts';
import {
  NOT_CONFIGURED,
  requestedMetrics,
  singleParameter,
  unconfiguredAnswer,
} from './unconfigured-metrics.ts';
import type { PlatformStatistics } from './platform-statistics.ts';
import type { WorkspaceStatistics } from './workspace-statistics.ts';

/** `/kapis/monitoring.<p>.io/v1alpha3` */
export function monitoringApiPath(platformName: string): string {
  return `/kapis/monitoring.${platformName}.io/v1alpha3`;
}

/**
 * The original's monitoring API while this server has no metrics backend: 200 with every requested
 * metric present and carrying an error that says so — the shape the original answers when its backend
 * fails — so that the console shows empty charts instead of an error toast. The counts the original
 * takes from its caches rather than its backend are real: the platform's (`…/kubesphere`, for any
 * authenticated caller, as nothing but three numbers is shown) and a workspace's
 * (`…/workspaces/{ws}?type=statistics`, for whom may see that workspace).
 */
export function monitoringRoutes(deps: {
  platformName: string;
  platform: PlatformStatistics;
  workspaces: WorkspaceStatistics;
  /** Throws the 403/404 to answer when the caller may not see the workspace. */
  seeWorkspace: (identity: Identity, workspace: string) => Promise<unknown>;
}): Router {
  const { platformName } = deps;
  const base = monitoringApiPath(platformName);
  const router = Router();
  const send = (res: Response, body: unknown) => res.set('Cache-Control', 'no-store').json(body);

  const now = () => Math.floor(Date.now() / 1000);
  const named = (req: Request, res: Response) => {
    const filter = singleParameter(req.query, 'metrics_filter');
    // Statistics of no workspace in particular: nothing to count.
    if (req.path === `${base}/workspaces` && singleParameter(req.query, 'type') === 'statistics') {
      send(res, unconfiguredAnswer(WORKSPACE_STATISTICS));
      return;
    }
    send(res, unconfiguredAnswer(requestedMetrics(filter)));
  };
  const oneWorkspace = async (req: Request<{ workspace: string }>, res: Response) => {
    if (singleParameter(req.query, 'type') !== 'statistics') return named(req, res);
    await deps.seeWorkspace(identityOf(req), req.params.workspace);
    send(res, { results: await deps.workspaces.metrics(req.params.workspace, now()) });
  };
  for (const path of NAMED_METRICS_PATHS)
    router.get(`${base}${path}`, path === '/workspaces/:workspace' ? oneWorkspace : named);
  router.get(`${base}/kubesphere`, async (_req, res) => {
    send(res, { results: await deps.platform.metrics(now()) });
  });
  for (const path of [...TARGET_PATHS.metadata, ...TARGET_PATHS.labelsets])
    router.get(`${base}${path}`, (_req, res) => send(res, { data: [] }));
  for (const path of TARGET_PATHS.query)
    router.get(`${base}${path}`, (_req, res) => send(res, { data: {}, error: NOT_CONFIGURED }));
  return router;
}
