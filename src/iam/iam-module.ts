import { accessReviewerRef } from '../access/access-module.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { cacheMetricsRef, configRef, kubeConfigRef, loggerRef } from '../host-services.ts';
import { userDirectoryRef } from '../tokens/user-directory.ts';
import { memberRolesApi } from './member-roles-api.ts';
import { memberRolesRoutes } from './member-roles-routes.ts';
import { MemberRoles } from './member-roles.ts';
import { RoleCache } from './role-cache.ts';
import { roleVocabulary } from './role-objects.ts';
import { usersApi } from './users-api.ts';
import { usersRoutes } from './users-routes.ts';
import { UsersService } from './users-service.ts';

/**
 * The original's IAM reads its console needs: users (never a secret) with their global role, and the
 * role templates of a member at each scope, from the original's role objects or derived from
 * Kubernetes RBAC.
 */
export const iamModule: FeatureModule = {
  name: 'iam',
  requires: [configRef, kubeConfigRef, loggerRef, cacheMetricsRef, accessReviewerRef, userDirectoryRef],
  register(ctx) {
    const { platformName } = ctx.get(configRef);
    const directory = ctx.get(userDirectoryRef);
    const reviewer = ctx.get(accessReviewerRef);
    const vocabulary = roleVocabulary(platformName);
    const cache = new RoleCache({
      kubeConfig: ctx.get(kubeConfigRef),
      iam: directory.iam,
      vocabulary,
      logger: ctx.get(loggerRef),
      metrics: ctx.get(cacheMetricsRef),
    });
    const roles = new MemberRoles({ roles: cache, users: directory, reviewer, vocabulary, platformName });
    const users = new UsersService({ users: directory, roles, reviewer, vocabulary, platformName });
    return {
      edge: {
        protectedRoutes: [usersRoutes({ platformName, users }), memberRolesRoutes({ platformName, roles })],
        openApi: [usersApi({ platformName }), memberRolesApi({ platformName })],
      },
      readiness: { 'iam-roles': () => cache.ready },
      start: () => cache.start(),
      stop: () => cache.stop(),
    };
  },
};
