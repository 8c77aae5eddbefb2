import { Router, type Request, type Response } from 'express';
import { jsonBody, OBJECT_TYPES, type JsonBody } from '../http/json-body.ts';
import { identityOf } from '../http/request-context.ts';
import type { GroupMembers } from './group-members.ts';
import type { GroupRoleBindings } from './group-role-bindings.ts';
import type { Groups } from './groups.ts';
import { iamPrefix } from './iam-paths.ts';

type Params = Record<string, string>;

/** The largest group write a request may send: far beyond what the console sends. */
export const MAX_GROUP_BYTES = 256 * 1024;

const body = jsonBody({ limitBytes: MAX_GROUP_BYTES, accept: OBJECT_TYPES });
const patchBody = jsonBody({
  limitBytes: MAX_GROUP_BYTES,
  accept: ['application/merge-patch+json', 'application/json'],
});
const bodyOf = (res: Response): unknown => (res.locals['json'] as JsonBody).value;
const SUCCESS = { message: 'success' };

/**
 * A workspace's groups, their members (GroupBindings) and their role bindings in the workspace and its
 * projects. PUT and PATCH of a group are also served with a trailing slash, as the original registers
 * them (Express matches both: routing is not strict).
 */
export function groupsRoutes(deps: {
  platformName: string;
  groups: Groups;
  members: GroupMembers;
  roleBindings: GroupRoleBindings;
}): Router {
  const router = Router();
  const ws = `${iamPrefix(deps.platformName)}/workspaces/:workspace`;
  const ns = `${iamPrefix(deps.platformName)}/namespaces/:namespace`;
  const send = (res: Response, value: unknown) => res.set('Cache-Control', 'no-store').json(value);
  const workspace = (req: Request<Params>) => req.params['workspace'] ?? '';
  const param = (req: Request<Params>, name: string) => req.params[name] ?? '';
  const { groups, members, roleBindings } = deps;

  router.get(`${ws}/groups`, async (req: Request<Params>, res: Response) => {
    send(res, await groups.list(identityOf(req), workspace(req), req.query));
  });
  router.post(`${ws}/groups`, body, async (req: Request<Params>, res: Response) => {
    send(res, await groups.create(identityOf(req), workspace(req), bodyOf(res)));
  });
  router.get(`${ws}/groups/:group`, async (req: Request<Params>, res: Response) => {
    send(res, await groups.get(identityOf(req), workspace(req), param(req, 'group')));
  });
  router.put(`${ws}/groups/:group`, body, async (req: Request<Params>, res: Response) => {
    send(res, await groups.replace(identityOf(req), workspace(req), param(req, 'group'), bodyOf(res)));
  });
  router.patch(`${ws}/groups/:group`, patchBody, async (req: Request<Params>, res: Response) => {
    send(res, await groups.patch(identityOf(req), workspace(req), param(req, 'group'), bodyOf(res)));
  });
  router.delete(`${ws}/groups/:group`, async (req: Request<Params>, res: Response) => {
    await groups.remove(identityOf(req), workspace(req), param(req, 'group'));
    send(res, SUCCESS);
  });

  router.get(`${ws}/groupbindings`, async (req: Request<Params>, res: Response) => {
    send(res, await members.list(identityOf(req), workspace(req), req.query));
  });
  router.post(`${ws}/groupbindings`, body, async (req: Request<Params>, res: Response) => {
    send(res, await members.add(identityOf(req), workspace(req), bodyOf(res)));
  });
  router.delete(`${ws}/groupbindings/:groupbinding`, async (req: Request<Params>, res: Response) => {
    await members.remove(identityOf(req), workspace(req), param(req, 'groupbinding'));
    send(res, SUCCESS);
  });

  router.get(`${ws}/rolebindings`, async (req: Request<Params>, res: Response) => {
    send(res, await roleBindings.listProjects(identityOf(req), workspace(req), req.query));
  });
  router.get(`${ws}/workspacerolebindings`, async (req: Request<Params>, res: Response) => {
    send(res, await roleBindings.listWorkspace(identityOf(req), workspace(req), req.query));
  });
  router.post(`${ws}/workspacerolebindings`, body, async (req: Request<Params>, res: Response) => {
    send(res, await roleBindings.createWorkspace(identityOf(req), workspace(req), bodyOf(res)));
  });
  router.delete(`${ws}/workspacerolebindings/:rolebinding`, async (req: Request<Params>, res: Response) => {
    await roleBindings.removeWorkspace(identityOf(req), workspace(req), param(req, 'rolebinding'));
    send(res, SUCCESS);
  });

  router.post(`${ns}/rolebindings`, body, async (req: Request<Params>, res: Response) => {
    send(res, await roleBindings.createNamespace(identityOf(req), param(req, 'namespace'), bodyOf(res)));
  });
  router.delete(`${ns}/rolebindings/:rolebinding`, async (req: Request<Params>, res: Response) => {
    await roleBindings.removeNamespace(identityOf(req), param(req, 'namespace'), param(req, 'rolebinding'));
    send(res, SUCCESS);
  });
  return router;
}
