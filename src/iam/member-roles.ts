import type { AccessReviewer, ResourceAttributes } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { AUTHENTICATED_GROUP } from '../kernel/identity.ts';
import type { UserObject } from '../users/iam-resources.ts';
import type { UserDirectory } from '../users/user-directory.ts';
import { derivedTemplates, EVERYTHING, type Scope } from './derived-rules.ts';
import type { RoleCache } from './role-cache.ts';
import type { RoleObject, RoleVocabulary } from './role-objects.ts';

/** The original's name for the global role of a member who may do everything. */
export const PLATFORM_ADMIN = 'platform-admin';

/** The member-roles paths, with what the original authorizes for asking about another user. */
const ASKING_ABOUT_OTHERS: Record<Scope, { resource: string; subresource: string }> = {
  global: { resource: 'users', subresource: 'globalroles' },
  cluster: { resource: 'clustermembers', subresource: 'clusterroles' },
  workspace: { resource: 'workspacemembers', subresource: 'workspaceroles' },
  namespace: { resource: 'members', subresource: 'roles' },
};

/**
 * "Which role templates does this member have?" at each scope, and the global role a User is shown
 * with: from the original's role objects when they are installed, else derived from Kubernetes RBAC.
 * Members may always ask about themselves (the original's `authenticated` role allows exactly that);
 * asking about another user needs Kubernetes RBAC `get` on the path's resource and subresource in the
 * IAM group, as the original authorizes these paths.
 */
export class MemberRoles {
  readonly #roles: RoleCache;
  readonly #users: UserDirectory;
  readonly #reviewer: AccessReviewer;
  readonly #words: RoleVocabulary;
  readonly #platform: string;

  constructor(deps: {
    roles: RoleCache;
    users: UserDirectory;
    reviewer: AccessReviewer;
    vocabulary: RoleVocabulary;
    platformName: string;
  }) {
    this.#roles = deps.roles;
    this.#users = deps.users;
    this.#reviewer = deps.reviewer;
    this.#words = deps.vocabulary;
    this.#platform = deps.platformName;
  }

  /** Changes whenever what `globalRoleOf` answers may (a role, a binding, the model). */
  get stateTag(): string {
    return this.#roles.stateTag;
  }

  /** The user's global role name: the bound GlobalRole's, or (derived) `platform-admin` for who may do everything. */
  async globalRoleOf(user: UserObject): Promise<string | undefined> {
    if (this.#model() === 'original') return this.#roles.globalRoleOf(user.metadata.name)?.metadata.name;
    return (await this.#allowed(identityOf(user), EVERYTHING)) ? PLATFORM_ADMIN : undefined;
  }

  async templates(
    caller: Identity,
    request: { scope: Scope; username: string; workspace?: string; namespace?: string },
  ): Promise<RoleObject[]> {
    const { scope, username, namespace, workspace } = request;
    if (caller.username !== username) {
      await this.#reviewer.authorize(caller, {
        verb: 'get',
        group: this.#users.iam.group,
        ...ASKING_ABOUT_OTHERS[scope],
        name: username,
        ...(namespace ? { namespace } : {}),
      });
    }
    const user = await this.#users.get(username);
    if (!user) throw notFound(this.#users.iam.group, username);
    const groups = user.spec?.groups ?? [];
    if (this.#model() === 'original') {
      switch (scope) {
        case 'global':
          return this.#roles.globalTemplates(username);
        case 'cluster':
          return this.#roles.clusterTemplates(username);
        case 'workspace':
          return this.#roles.workspaceTemplates(username, groups, workspace ?? '');
        case 'namespace':
          return this.#roles.namespaceTemplates(username, groups, namespace ?? '');
      }
    }
    // Asked about oneself, the caller's own identity is the member's: the same reviews either way.
    const member = caller.username === username ? caller : identityOf(user);
    return derivedTemplates({
      scope,
      platform: this.#platform,
      vocabulary: this.#words,
      allowed: (attributes) => this.#allowed(member, attributes),
      ...(scope === 'namespace' && namespace ? { namespace } : {}),
    });
  }

  #model() {
    const model = this.#roles.model;
    if (model === undefined || !this.#roles.ready) {
      throw new ApiError('Unavailable', 'the role model is not known yet (its caches are starting)', {
        retryAfterSeconds: 1,
      });
    }
    return model;
  }

  async #allowed(identity: Identity, attributes: ResourceAttributes): Promise<boolean> {
    try {
      return (await this.#reviewer.check(identity, attributes)).allowed;
    } catch {
      throw new ApiError('Unavailable', 'authorization check is temporarily unavailable', {
        retryAfterSeconds: 1,
      });
    }
  }
}

/** The Kubernetes identity of a User, as the bearer door gives it to the user's own requests. */
export function identityOf(user: UserObject): Identity {
  return {
    username: user.metadata.name,
    groups: [...new Set([...(user.spec?.groups ?? []), AUTHENTICATED_GROUP])],
  };
}

export function notFound(group: string, name: string): ApiError {
  return new ApiError('NotFound', `users.${group} "${name}" not found`, {
    details: { name, group, kind: 'users' },
  });
}
