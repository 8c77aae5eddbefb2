import { Router } from 'express';
import type { KubeVersionSource } from './kube-version.ts';
import type { ServerVersion } from './server-version.ts';

/**
 * `GET /kapis/version`, anonymous as in the system we re-create (its console reads it before login):
 * this server's build facts plus `kubernetes`, the kube-apiserver's own version object (left out
 * when the kube-apiserver cannot be asked).
 */
export function versionRoutes(version: ServerVersion, kube: KubeVersionSource): Router {
  const router = Router();
  router.get('/kapis/version', async (_req, res) => {
    const kubernetes = await kube.get();
    res.set('Cache-Control', 'no-store').json(kubernetes ? { ...version, kubernetes } : version);
  });
  return router;
}
