import { Router, type Request, type Response } from 'express';
import { identityOf } from '../http/request-context.ts';
import { iamPrefix } from './iam-paths.ts';
import type { UsersService } from './users-service.ts';

/** `GET …/users` (the v1alpha3 list envelope) and `GET …/users/{user}`, as the original serves them. */
export function usersRoutes(deps: { platformName: string; users: UsersService }): Router {
  const router = Router();
  const prefix = iamPrefix(deps.platformName);
  router.get(`${prefix}/users`, async (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store').json(await deps.users.list(identityOf(req), req.query));
  });
  router.get(`${prefix}/users/:user`, async (req: Request<{ user: string }>, res: Response) => {
    res.set('Cache-Control', 'no-store').json(await deps.users.get(identityOf(req), req.params.user));
  });
  return router;
}
