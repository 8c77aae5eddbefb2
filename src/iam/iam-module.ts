import { accessReviewerRef } from '../access/access-module.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { cacheMetricsRef, configRef, kubeConfigRef, loggerRef } from '../host-services.ts';
import { oneReplicaRef, reconcileMetricsRef } from '../reconcile/reconcile-module.ts';
import { workspaceAccessRef } from '../tenant/tenant-module.ts';
import { userAccounts, userSessionsRef } from '../users/user-accounts.ts';
import { userDirectoryRef } from '../users/user-directory.ts';
import { userAccountStoreRef } from '../users/users-module.ts';
import { packageVersion } from '../version.ts';
import { devopsRoutes } from './devops-routes.ts';
import { GroupAccess } from './group-access.ts';
import { GroupCache } from './group-cache.ts';
import { GroupMembers } from './group-members.ts';
import { GroupRoleBindings } from './group-role-bindings.ts';
import { Groups } from './groups.ts';
import { groupsApi } from './groups-api.ts';
import { groupsRoutes } from './groups-routes.ts';
import { IamKube } from './iam-kube.ts';
import { loginRecordsApi } from './login-records-api.ts';
import { loginRecordsRoutes } from './login-records-routes.ts';
import { MemberLists } from './member-lists.ts';
import { memberWritesRoutes } from './member-writes-routes.ts';
import { RbacMemberWrites } from './member-writes.ts';
import { WorkspaceMemberWrites } from './workspace-member-writes.ts';
import { memberRolesApi } from './member-roles-api.ts';
import { memberRolesRoutes } from './member-roles-routes.ts';
import { MemberRoles } from './member-roles.ts';
import { membersApi } from './members-api.ts';
import { membersRoutes } from './members-routes.ts';
import { EscalationCheck } from './escalation-check.ts';
import { RbacSync } from './rbac-sync.ts';
import { RoleCache } from './role-cache.ts';
import { RoleLists } from './role-lists.ts';
import { roleWritesRoutes } from './role-writes-routes.ts';
import { RoleWrites } from './role-writes.ts';
import { roleVocabulary } from './role-objects.ts';
import { rolesApi } from './roles-api.ts';
import { rolesRoutes } from './roles-routes.ts';
import { ScopeAccess } from './scope-access.ts';
import { UserBindings } from './user-bindings.ts';
import { UserWrites } from './user-writes.ts';
import { usersApi } from './users-api.ts';
import { usersRoutes } from './users-routes.ts';
import { UsersService } from './users-service.ts';

/**
 * The original's IAM reads its console needs: users (never a secret) with their global role, the roles
 * and the members of every scope, and the role templates of a member at each scope, from the original's
 * role objects or derived from Kubernetes RBAC.
 */
export const iamModule: FeatureModule = {
  name: 'iam',
  requires: [
    configRef,
    kubeConfigRef,
    loggerRef,
    cacheMetricsRef,
    accessReviewerRef,
    userDirectoryRef,
    userAccountStoreRef,
    userSessionsRef,
    workspaceAccessRef,
    oneReplicaRef,
    reconcileMetricsRef,
  ],
  register(ctx) {
    const { platformName } = ctx.get(configRef);
    const directory = ctx.get(userDirectoryRef);
    const accountStore = ctx.get(userAccountStoreRef);
    const reviewer = ctx.get(accessReviewerRef);
    const vocabulary = roleVocabulary(platformName);
    const tenantGroup = `tenant.${platformName}.io`;
    const cache = new RoleCache({
      kubeConfig: ctx.get(kubeConfigRef),
      iam: directory.iam,
      tenantGroup,
      vocabulary,
      logger: ctx.get(loggerRef),
      metrics: ctx.get(cacheMetricsRef),
    });
    // No escalation through the role kinds the server writes for the caller (docs/iam-api.md).
    const escalation = new EscalationCheck({
      kubeConfig: ctx.get(kubeConfigRef),
      platformName,
      timeoutMs: 10_000,
    });
    const roles = new MemberRoles({ roles: cache, users: directory, reviewer, vocabulary, platformName });
    const users = new UsersService({ users: directory, roles, reviewer, vocabulary, platformName });
    const accounts = userAccounts({
      users: accountStore.store,
      sessions: ctx.get(userSessionsRef),
      iamGroup: directory.iam.group,
    });
    const writes = new UserWrites({
      accounts,
      users: directory,
      roles,
      cache,
      bindings: new UserBindings({ kubeConfig: ctx.get(kubeConfigRef), iamGroup: directory.iam.group }),
      reviewer,
      vocabulary,
      escalation,
    });
    const access = new ScopeAccess({
      reviewer,
      workspaces: ctx.get(workspaceAccessRef),
      cache,
      iamGroup: directory.iam.group,
      tenantGroup,
    });
    const roleLists = new RoleLists({ cache, access, vocabulary, iamGroup: directory.iam.group });
    const members = new MemberLists({ cache, access, users: directory, vocabulary });
    const writeDeps = {
      kubeConfig: ctx.get(kubeConfigRef),
      reviewer,
      users: directory,
      platformName,
      timeoutMs: 10_000,
      escalation,
    };
    const memberWrites = new RbacMemberWrites({ ...writeDeps, cache });
    const workspaceMemberWrites = new WorkspaceMemberWrites({ ...writeDeps, cache });
    const roleWrites = new RoleWrites({ ...writeDeps, vocabulary });
    const groupCache = new GroupCache({
      kubeConfig: ctx.get(kubeConfigRef),
      iamGroup: directory.iam.group,
      logger: ctx.get(loggerRef),
      metrics: ctx.get(cacheMetricsRef),
    });
    const kube = new IamKube(ctx.get(kubeConfigRef), writeDeps.timeoutMs);
    const groupAccess = new GroupAccess({
      reviewer,
      workspaces: ctx.get(workspaceAccessRef),
      kube,
      platformName,
    });
    const groupMembers = new GroupMembers({
      cache: groupCache,
      access: groupAccess,
      kube,
      users: directory,
      accounts,
      platformName,
    });
    const groupRoleBindings = new GroupRoleBindings({
      kube,
      access: groupAccess,
      scopes: access,
      roles: cache,
      reviewer,
      users: directory,
      platformName,
      escalation,
    });
    const groups = new Groups({
      cache: groupCache,
      access: groupAccess,
      kube,
      members: groupMembers,
      roleBindings: groupRoleBindings,
      platformName,
    });
    // The platform's roles and bindings in force as Kubernetes RBAC, by whichever replica leads
    // (docs/reconcilers.md#the-rbac-reconciler).
    const rbacSync = new RbacSync({
      kubeConfig: ctx.get(kubeConfigRef),
      platformName,
      logger: ctx.get(loggerRef),
      metrics: ctx.get(reconcileMetricsRef),
      timeoutMs: 10_000,
    });
    const runner = ctx.get(oneReplicaRef);
    let removeRbacSync: (() => Promise<void>) | undefined;
    return {
      edge: {
        protectedRoutes: [
          usersRoutes({ platformName, users, writes }),
          memberRolesRoutes({ platformName, roles }),
          rolesRoutes({ platformName, roles: roleLists }),
          membersRoutes({ platformName, members }),
          memberWritesRoutes({ platformName, writes: memberWrites, workspaces: workspaceMemberWrites }),
          roleWritesRoutes({ platformName, writes: roleWrites }),
          loginRecordsRoutes({
            iam: directory.iam,
            records: accountStore.records,
            enabled: () => accountStore.schema.schema.loginRecords,
            authorizer: reviewer,
          }),
          groupsRoutes({ platformName, groups, members: groupMembers, roleBindings: groupRoleBindings }),
          devopsRoutes(platformName),
        ],
        openApi: [
          usersApi({ platformName }),
          memberRolesApi({ platformName }),
          rolesApi({ platformName }),
          membersApi({ platformName }),
          loginRecordsApi({ platformName, version: packageVersion() }),
          groupsApi({ platformName }),
        ],
      },
      readiness: { 'iam-roles': () => cache.ready, 'iam-groups': () => groupCache.ready },
      start: () => {
        // A cached "allowed" must not outlive the binding that granted it (nor a "denied" a new grant).
        cache.onRbacChange(() => reviewer.rbacChanged());
        cache.start();
        groupCache.start();
        removeRbacSync = runner.add(rbacSync);
      },
      stop: async () => {
        await removeRbacSync?.();
        await Promise.all([cache.stop(), groupCache.stop()]);
      },
    };
  },
};
