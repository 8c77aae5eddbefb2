import { Router, type Request, type Response } from 'express';
import { identityOf } from '../http/request-context.ts';
import type { CallerLister } from './caller-lister.ts';
import { abnormalWorkloads, components, namespaceQuota } from './overview.ts';

export interface OverviewRoutesOptions {
  platformName: string;
  lister: CallerLister;
}

/** The v1alpha2 base path of the resources group, where the original keeps its overview cards. */
export function overviewApiPath(platformName: string): string {
  return `/kapis/resources.${platformName}.io/v1alpha2`;
}

/**
 * The overview cards the original's console reads. Everything is read from the kube-apiserver as the
 * caller, so a caller sees the cards of what RBAC lets them list (else a 403 naming what is missing).
 */
export function overviewRoutes(options: OverviewRoutesOptions): Router {
  const { lister, platformName } = options;
  const base = overviewApiPath(platformName);
  const router = Router();
  router.get(`${base}/components`, async (req: Request, res: Response) => {
    res.json(await components(lister, identityOf(req), platformName));
  });
  router.get(
    `${base}/namespaces/:namespace/quotas`,
    async (req: Request<{ namespace: string }>, res: Response) => {
      res.json(await namespaceQuota(lister, identityOf(req), req.params.namespace));
    },
  );
  router.get(
    `${base}/namespaces/:namespace/abnormalworkloads`,
    async (req: Request<{ namespace: string }>, res: Response) => {
      res.json(await abnormalWorkloads(lister, identityOf(req), req.params.namespace));
    },
  );
  return router;
}
