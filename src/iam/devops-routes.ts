import { Router } from 'express';
import { servedUnder } from '../http/path-guard.ts';
import { ApiError } from '../kernel/api-error.ts';
import { iamPrefix } from './iam-paths.ts';

/**
 * The original's 12 IAM routes of DevOps projects (`/devops/{devops}/members…`, `…/roles…`): DevOps
 * projects are not served here. Every path under `/devops`, whatever the method, answers 404 saying so.
 */
export function devopsRoutes(platformName: string): Router {
  const router = Router();
  const prefix = `${iamPrefix(platformName)}/devops`;
  // A mounted middleware, not a route: every method and every path below it, nothing else.
  router.use(prefix, () => {
    throw new ApiError(
      'NotFound',
      'DevOps projects are not served by this server: their members and roles (iam devops routes) do not exist here',
      { details: { group: `iam.${platformName}.io`, kind: 'devops' } },
    );
  });
  return servedUnder(router, [prefix]);
}
