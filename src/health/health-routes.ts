import { Router } from 'express';
import type { Readiness } from '../kernel/readiness.ts';

/**
 * Anonymous probe endpoints. Bodies follow the kube-apiserver's plain-text style; `?verbose` lists checks.
 * (`/version` is the kube-apiserver's version object: kube-proxy/kube-version-routes.ts.)
 */
export function healthRoutes(readiness: Readiness): Router {
  const router = Router();
  const alive = (_req: unknown, res: import('express').Response) => {
    res.type('text/plain').set('Cache-Control', 'no-store').send('ok');
  };
  router.get('/healthz', alive);
  router.get('/livez', alive);
  router.get('/readyz', (req, res) => {
    const report = readiness.report();
    res
      .status(report.ready ? 200 : 503)
      .type('text/plain')
      .set('Cache-Control', 'no-store');
    if (req.query['verbose'] !== undefined) {
      const lines = report.checks.map(
        (c) => `[${c.ok ? '+' : '-'}]${c.name} ${c.ok ? 'ok' : 'failed'}${c.detail ? `: ${c.detail}` : ''}`,
      );
      res.send(`${lines.join('\n')}\nreadyz check ${report.ready ? 'passed' : 'failed'}\n`);
    } else {
      res.send(report.ready ? 'ok' : 'not ready');
    }
  });
  return router;
}
