import { Router, type Request, type Response } from 'express';
import { jsonBody, OBJECT_TYPES, type JsonBody } from '../http/json-body.ts';
import { identityOf } from '../http/request-context.ts';
import { iamPrefix } from './iam-paths.ts';
import type { RoleWrites } from './role-writes.ts';
import type { Place } from './scope-access.ts';

type Params = Record<string, string>;

/** The largest role a request may send: far beyond any role the console writes. */
export const MAX_ROLE_BYTES = 256 * 1024;

const body = jsonBody({ limitBytes: MAX_ROLE_BYTES, accept: OBJECT_TYPES });
const patchBody = jsonBody({
  limitBytes: MAX_ROLE_BYTES,
  accept: ['application/merge-patch+json', 'application/json'],
});
const bodyOf = (res: Response): unknown => (res.locals['json'] as JsonBody).value;

/** Create (POST), replace (PUT), patch (PATCH) and delete the roles of the four scopes. */
export function roleWritesRoutes(deps: { platformName: string; writes: RoleWrites }): Router {
  const router = Router();
  const prefix = iamPrefix(deps.platformName);
  const scopes: { path: string; item: string; place: (p: Params) => Place }[] = [
    { path: 'globalroles', item: 'globalrole', place: () => ({ scope: 'global' }) },
    { path: 'clusterroles', item: 'clusterrole', place: () => ({ scope: 'cluster' }) },
    {
      path: 'workspaces/:workspace/workspaceroles',
      item: 'workspacerole',
      place: (p) => ({ scope: 'workspace', workspace: p['workspace'] ?? '' }),
    },
    {
      path: 'namespaces/:namespace/roles',
      item: 'role',
      place: (p) => ({ scope: 'namespace', namespace: p['namespace'] ?? '' }),
    },
  ];
  for (const { path, item, place } of scopes) {
    router.post(`${prefix}/${path}`, body, async (req: Request<Params>, res: Response) => {
      res.json(await deps.writes.create(identityOf(req), place(req.params), bodyOf(res)));
    });
    router.put(`${prefix}/${path}/:${item}`, body, async (req: Request<Params>, res: Response) => {
      const name = req.params[item] ?? '';
      res.json(await deps.writes.replace(identityOf(req), place(req.params), name, bodyOf(res)));
    });
    router.patch(`${prefix}/${path}/:${item}`, patchBody, async (req: Request<Params>, res: Response) => {
      const name = req.params[item] ?? '';
      res.json(await deps.writes.patch(identityOf(req), place(req.params), name, bodyOf(res)));
    });
    router.delete(`${prefix}/${path}/:${item}`, async (req: Request<Params>, res: Response) => {
      await deps.writes.remove(identityOf(req), place(req.params), req.params[item] ?? '');
      res.json({ message: 'success' });
    });
  }
  return router;
}
