import { Router } from 'express';
import type { KubeVersionSource } from './kube-version.ts';
import type { ReportedVersion } from './reported-version.ts';

/**
 * `GET /kapis/version`, anonymous as in the system we re-create (its console reads it before login):
 * the reported version (reported-version.ts) plus `kubernetes`, the kube-apiserver's own version object
 * (left out when the kube-apiserver cannot be asked).
 */
export function versionRoutes(version: ReportedVersion, kube: KubeVersionSource): Router {
  const router = Router();
  router.get('/kapis/version', async (_req, res) => {
    const kubernetes = await kube.get();
    const { platformApiserver, ...fields } = version;
    // The original's fields in its order, then our own.
    res
      .set('Cache-Control', 'no-store')
      .json(kubernetes ? { ...fields, kubernetes, platformApiserver } : version);
  });
  return router;
}
