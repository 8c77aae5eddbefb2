import { Router } from 'express';
import type { MetricsExport } from '../observability/metrics-export.ts';

/** Anonymous Prometheus scrape endpoint in the text exposition format. */
export function metricsRoutes(metrics: MetricsExport): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    const body = await metrics.text();
    res.type(metrics.contentType).set('Cache-Control', 'no-store').send(body);
  });
  return router;
}
