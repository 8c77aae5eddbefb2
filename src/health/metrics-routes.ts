import { Router } from 'express';
import type { Registry } from 'prom-client';

/** Anonymous Prometheus scrape endpoint in the text exposition format. */
export function metricsRoutes(registry: Registry): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    const body = await registry.metrics();
    res.type(registry.contentType).set('Cache-Control', 'no-store').send(body);
  });
  return router;
}
