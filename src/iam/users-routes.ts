import { Router, type Request, type Response } from 'express';
import { jsonBody, OBJECT_TYPES, type JsonBody } from '../http/json-body.ts';
import { sendJsonBytes } from '../http/json-bytes.ts';
import { identityOf } from '../http/request-context.ts';
import { iamPrefix } from './iam-paths.ts';
import type { UserWrites } from './user-writes.ts';
import type { UsersService } from './users-service.ts';

/** The largest user body accepted: a User is small (a few annotations). */
export const MAX_USER_BYTES = 64 * 1024;

const userBody = jsonBody({ limitBytes: MAX_USER_BYTES, accept: OBJECT_TYPES });
/** DeleteOptions: optional and not read (the console sends `{}`, scripts often nothing). */
const deleteBody = jsonBody({ limitBytes: MAX_USER_BYTES, accept: OBJECT_TYPES, optional: true });
const bodyOf = (res: Response): unknown => (res.locals['json'] as JsonBody).value;

/**
 * `GET …/users` (the v1alpha3 list envelope) and `GET …/users/{user}`, as the original serves them; and
 * its writes: `POST …/users`, `PUT …/users/{user}`, `PUT …/users/{user}/password`, `DELETE …/users/{user}`.
 */
export function usersRoutes(deps: { platformName: string; users: UsersService; writes: UserWrites }): Router {
  const router = Router();
  const prefix = iamPrefix(deps.platformName);
  const { writes } = deps;
  router.get(`${prefix}/users`, async (req: Request, res: Response) => {
    sendJsonBytes(res, await deps.users.list(identityOf(req), req.url, () => req.query));
  });
  router.post(`${prefix}/users`, userBody, async (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store').json(await writes.create(identityOf(req), bodyOf(res)));
  });
  router.get(`${prefix}/users/:user`, async (req: Request<{ user: string }>, res: Response) => {
    res.set('Cache-Control', 'no-store').json(await deps.users.get(identityOf(req), req.params.user));
  });
  router.put(`${prefix}/users/:user`, userBody, async (req: Request<{ user: string }>, res: Response) => {
    res
      .set('Cache-Control', 'no-store')
      .json(await writes.update(identityOf(req), req.params.user, bodyOf(res)));
  });
  router.delete(
    `${prefix}/users/:user`,
    deleteBody,
    async (req: Request<{ user: string }>, res: Response) => {
      res.set('Cache-Control', 'no-store').json(await writes.delete(identityOf(req), req.params.user));
    },
  );
  router.put(
    `${prefix}/users/:user/password`,
    userBody,
    async (req: Request<{ user: string }>, res: Response) => {
      res
        .set('Cache-Control', 'no-store')
        .json(await writes.changePassword(identityOf(req), req.params.user, bodyOf(res)));
    },
  );
  return router;
}
