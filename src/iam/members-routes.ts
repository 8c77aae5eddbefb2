import { Router, type Request, type Response } from 'express';
import { sendJsonBytes } from '../http/json-bytes.ts';
import { identityOf } from '../http/request-context.ts';
import { iamPrefix } from './iam-paths.ts';
import type { MemberLists, MemberPlace } from './member-lists.ts';

type Params = Record<string, string>;

/**
 * The members of the cluster, a workspace and a namespace (the v1alpha3 envelope of Users) and one
 * member, as the original serves them.
 */
export function membersRoutes(deps: { platformName: string; members: MemberLists }): Router {
  const router = Router();
  const prefix = iamPrefix(deps.platformName);
  const send = (res: Response, body: unknown) => res.set('Cache-Control', 'no-store').json(body);
  const scopes: { path: string; item: string; place: (p: Params) => MemberPlace }[] = [
    { path: 'clustermembers', item: 'clustermember', place: () => ({ scope: 'cluster' }) },
    {
      path: 'workspaces/:workspace/workspacemembers',
      item: 'workspacemember',
      place: (p) => ({ scope: 'workspace', workspace: p['workspace'] ?? '' }),
    },
    {
      path: 'namespaces/:namespace/members',
      item: 'member',
      place: (p) => ({ scope: 'namespace', namespace: p['namespace'] ?? '' }),
    },
  ];
  for (const { path, item, place } of scopes) {
    router.get(`${prefix}/${path}`, async (req: Request<Params>, res: Response) => {
      sendJsonBytes(
        res,
        await deps.members.list(identityOf(req), place(req.params), req.url, () => req.query),
      );
    });
    router.get(`${prefix}/${path}/:${item}`, async (req: Request<Params>, res: Response) => {
      send(res, await deps.members.get(identityOf(req), place(req.params), req.params[item] ?? ''));
    });
  }
  return router;
}
