import { Router } from 'express';
import type { OpenApiDocument } from './openapi-document.ts';

/** Anonymous: the OpenAPI 3.1 document of this server's own routes, serialised once. */
export function openApiRoutes(document: OpenApiDocument): Router {
  const body = JSON.stringify(document);
  const router = Router();
  router.get('/openapi/platform/v3', (_req, res) => {
    res.type('application/json').send(body);
  });
  return router;
}
