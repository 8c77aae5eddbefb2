import { Router, type Request, type Response } from 'express';
import { identityOf } from '../http/request-context.ts';
import { iamPrefix } from './iam-paths.ts';
import type { MemberRoles } from './member-roles.ts';

/**
 * The role templates of a member at each scope, as arrays (not list envelopes), as the original's
 * console reads them to decide which menus to show.
 */
export function memberRolesRoutes(deps: { platformName: string; roles: MemberRoles }): Router {
  const router = Router();
  const prefix = iamPrefix(deps.platformName);
  const send = (res: Response, body: unknown) => res.set('Cache-Control', 'no-store').json(body);
  router.get(`${prefix}/users/:user/globalroles`, async (req: Request<{ user: string }>, res: Response) => {
    send(res, await deps.roles.templates(identityOf(req), { scope: 'global', username: req.params.user }));
  });
  router.get(
    `${prefix}/clustermembers/:clustermember/clusterroles`,
    async (req: Request<{ clustermember: string }>, res: Response) => {
      send(
        res,
        await deps.roles.templates(identityOf(req), { scope: 'cluster', username: req.params.clustermember }),
      );
    },
  );
  router.get(
    `${prefix}/workspaces/:workspace/workspacemembers/:workspacemember/workspaceroles`,
    async (req: Request<{ workspace: string; workspacemember: string }>, res: Response) => {
      const { workspace, workspacemember } = req.params;
      send(
        res,
        await deps.roles.templates(identityOf(req), {
          scope: 'workspace',
          username: workspacemember,
          workspace,
        }),
      );
    },
  );
  router.get(
    `${prefix}/namespaces/:namespace/members/:member/roles`,
    async (req: Request<{ namespace: string; member: string }>, res: Response) => {
      const { namespace, member } = req.params;
      send(
        res,
        await deps.roles.templates(identityOf(req), { scope: 'namespace', username: member, namespace }),
      );
    },
  );
  return router;
}
