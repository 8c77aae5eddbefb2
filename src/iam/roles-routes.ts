import { Router, type Request, type Response } from 'express';
import { sendJsonBytes } from '../http/json-bytes.ts';
import { identityOf } from '../http/request-context.ts';
import { iamPrefix } from './iam-paths.ts';
import type { RoleLists } from './role-lists.ts';
import type { Place } from './scope-access.ts';

type Params = Record<string, string>;

/**
 * The role lists (the v1alpha3 envelope) and one role, at the four scopes: GlobalRoles, ClusterRoles,
 * a workspace's WorkspaceRoles and a namespace's Roles, as the original serves them.
 */
export function rolesRoutes(deps: { platformName: string; roles: RoleLists }): Router {
  const router = Router();
  const prefix = iamPrefix(deps.platformName);
  const send = (res: Response, body: unknown) => res.set('Cache-Control', 'no-store').json(body);
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
    router.get(`${prefix}/${path}`, async (req: Request<Params>, res: Response) => {
      sendJsonBytes(res, await deps.roles.list(identityOf(req), place(req.params), req.url, () => req.query));
    });
    router.get(`${prefix}/${path}/:${item}`, async (req: Request<Params>, res: Response) => {
      send(res, await deps.roles.get(identityOf(req), place(req.params), req.params[item] ?? ''));
    });
  }
  return router;
}
