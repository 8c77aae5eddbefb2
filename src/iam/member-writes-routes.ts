import { Router, type Request, type Response } from 'express';
import { jsonBody, OBJECT_TYPES, type JsonBody } from '../http/json-body.ts';
import { identityOf } from '../http/request-context.ts';
import { iamPrefix } from './iam-paths.ts';
import { parseMember, parseMembers, type RbacMemberWrites, type RbacPlace } from './member-writes.ts';
import type { WorkspaceMemberWrites } from './workspace-member-writes.ts';

type Params = Record<string, string>;

/** The largest invite a request may send: thousands of members, far beyond what the console sends. */
export const MAX_MEMBERS_BYTES = 256 * 1024;

const body = jsonBody({ limitBytes: MAX_MEMBERS_BYTES, accept: OBJECT_TYPES });
const bodyOf = (res: Response): unknown => (res.locals['json'] as JsonBody).value;

/** Invite (POST a list), change a role (PUT) and remove (DELETE) the members of the cluster, a workspace and a project. */
export function memberWritesRoutes(deps: {
  platformName: string;
  writes: RbacMemberWrites;
  workspaces: WorkspaceMemberWrites;
}): Router {
  const router = Router();
  const prefix = iamPrefix(deps.platformName);
  const scopes: { path: string; item: string; place: (p: Params) => RbacPlace }[] = [
    { path: 'clustermembers', item: 'clustermember', place: () => ({ scope: 'cluster' }) },
    {
      path: 'namespaces/:namespace/members',
      item: 'member',
      place: (p) => ({ scope: 'namespace', namespace: p['namespace'] ?? '' }),
    },
  ];
  for (const { path, item, place } of scopes) {
    router.post(`${prefix}/${path}`, body, async (req: Request<Params>, res: Response) => {
      const members = parseMembers(bodyOf(res));
      res.json(await deps.writes.invite(identityOf(req), place(req.params), members));
    });
    router.put(`${prefix}/${path}/:${item}`, body, async (req: Request<Params>, res: Response) => {
      const member = parseMember(bodyOf(res));
      res.json(await deps.writes.change(identityOf(req), place(req.params), req.params[item] ?? '', member));
    });
    router.delete(`${prefix}/${path}/:${item}`, async (req: Request<Params>, res: Response) => {
      await deps.writes.remove(identityOf(req), place(req.params), req.params[item] ?? '');
      res.json({ message: 'success' });
    });
  }
  const ws = `${prefix}/workspaces/:workspace/workspacemembers`;
  const workspace = (req: Request<Params>) => req.params['workspace'] ?? '';
  const member = (req: Request<Params>) => req.params['workspacemember'] ?? '';
  router.post(ws, body, async (req: Request<Params>, res: Response) => {
    const members = parseMembers(bodyOf(res));
    res.json(await deps.workspaces.invite(identityOf(req), workspace(req), members));
  });
  router.put(`${ws}/:workspacemember`, body, async (req: Request<Params>, res: Response) => {
    const changed = parseMember(bodyOf(res));
    res.json(await deps.workspaces.change(identityOf(req), workspace(req), member(req), changed));
  });
  router.delete(`${ws}/:workspacemember`, async (req: Request<Params>, res: Response) => {
    await deps.workspaces.remove(identityOf(req), workspace(req), member(req));
    res.json({ message: 'success' });
  });
  return router;
}
