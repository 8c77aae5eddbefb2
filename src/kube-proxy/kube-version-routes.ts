import { Router, type Request, type Response } from 'express';
import type { BearerDoor } from '../http/bearer-door.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { KubeVersion, KubeVersionCache } from '../cluster/kube-version.ts';

export interface KubeVersionRoutesDependencies {
  versions: KubeVersionCache;
  /** Checks a token when one is sent (the same parsing, metric and 401 as every protected route). */
  door: BearerDoor;
}

/**
 * `GET /version`: the kube-apiserver's version object, so that kubectl version and helm
 * (.Capabilities.KubeVersion, a chart's kubeVersion constraint) see the cluster they talk to through
 * the proxy. As in Kubernetes, where the system:public-info-viewer role grants /version to
 * system:authenticated and system:unauthenticated alike, a caller without credentials gets it too;
 * a caller presenting a token that is not valid gets 401, as the kube-apiserver answers (a failed
 * authentication is never downgraded to anonymous).
 */
export function kubeVersionRoutes(deps: KubeVersionRoutesDependencies): Router {
  const router = Router();
  router.get('/version', async (req: Request, res: Response) => {
    if (req.headers.authorization !== undefined) await deps.door.admit(req);
    let version: KubeVersion;
    try {
      version = await deps.versions.get();
    } catch {
      throw new ApiError(
        'Unavailable',
        'the kube-apiserver’s version is not known yet: it could not be reached',
      );
    }
    res.json(version);
  });
  return router;
}
