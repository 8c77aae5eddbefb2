import type { AccessReviewer } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { stateOf, type UserObject } from '../users/iam-resources.ts';
import type { UserAccounts } from '../users/user-accounts.ts';
import type { UserDirectory } from '../users/user-directory.ts';
import { notFound, PLATFORM_ADMIN, type MemberRoles } from './member-roles.ts';
import type { RoleCache } from './role-cache.ts';
import type { RoleVocabulary } from './role-objects.ts';
import type { EscalationCheck } from './escalation-check.ts';
import type { UserBindings } from './user-bindings.ts';
import { checkPassword, invalid, readPasswordChange, readUser, type UserInput } from './user-input.ts';
import { publicUser } from './user-view.ts';
import { WRITE_VISIBLE_MS } from './written-visible.ts';

/** What the original answers a password change or a delete with. */
export const SUCCESS = { message: 'success' } as const;

/**
 * The original's user writes: create (the password hashed before any object carries it), update (never
 * the password), change password, delete (with the user's sessions and role bindings). Each is
 * authorized as the caller (a SubjectAccessReview) and then written with the server's own account.
 * The platform role is the original's GlobalRoleBinding; the last platform administrator stays.
 */
export class UserWrites {
  readonly #accounts: UserAccounts;
  readonly #users: UserDirectory;
  readonly #roles: MemberRoles;
  readonly #cache: RoleCache;
  readonly #bindings: UserBindings;
  readonly #reviewer: AccessReviewer;
  readonly #words: RoleVocabulary;
  readonly #group: string;
  readonly #ledgerAnnotation: string;
  readonly #escalation: EscalationCheck | undefined;
  /** Changes that can remove a platform administrator run one at a time (on this replica). */
  #adminChanges: Promise<unknown> = Promise.resolve();

  constructor(deps: {
    accounts: UserAccounts;
    users: UserDirectory;
    roles: MemberRoles;
    cache: RoleCache;
    bindings: UserBindings;
    /** Refuses binding a platform role whose rules the caller does not hold (403). */
    escalation?: EscalationCheck;
    reviewer: AccessReviewer;
    vocabulary: RoleVocabulary;
  }) {
    this.#accounts = deps.accounts;
    this.#users = deps.users;
    this.#roles = deps.roles;
    this.#cache = deps.cache;
    this.#bindings = deps.bindings;
    this.#escalation = deps.escalation;
    this.#reviewer = deps.reviewer;
    this.#words = deps.vocabulary;
    this.#group = deps.users.iam.group;
    this.#ledgerAnnotation = `${this.#group}/login-attempts`;
  }

  async create(caller: Identity, body: unknown): Promise<UserObject> {
    await this.#authorize(caller, 'create');
    const input = readUser(body, this.#group);
    const password = checkPassword(input.password, 'spec.password');
    if (input.spec.email === undefined) throw invalid('spec.email', 'required');
    if (input.spec.groups?.length)
      throw invalid(
        'spec.groups',
        'not set here: they become Kubernetes groups; an administrator sets them with kubectl',
      );
    const role = this.#takeRole(input);
    if (role) await this.#checkRole(caller, role, input.name);
    const annotations = { ...input.annotations };
    delete annotations[this.#ledgerAnnotation];
    const created = await this.#accounts.create(
      {
        apiVersion: `${this.#group}/v1alpha2`,
        kind: 'User',
        metadata: {
          name: input.name,
          ...(input.labels ? { labels: input.labels } : {}),
          ...(Object.keys(annotations).length ? { annotations } : {}),
        },
        spec: input.spec,
      },
      password,
    );
    if (role) {
      try {
        await this.#bindings.setGlobalRole(input.name, role);
      } catch (err) {
        // Not half-written: a user asked for with a role does not stay without it.
        await this.#accounts.remove(input.name);
        throw err;
      }
      await this.#roleShown(input.name, role);
    }
    return this.#view(created, role);
  }

  async update(caller: Identity, name: string, body: unknown): Promise<UserObject> {
    const input = readUser(body, this.#group);
    if (input.name !== name)
      throw invalid(
        'metadata.name',
        `the name of the object (${input.name}) does not match the name on the URL (${name})`,
      );
    if (caller.username !== name) await this.#authorize(caller, 'update', name);
    const current = await this.#users.get(name);
    if (!current) throw notFound(this.#group, name);
    if (input.spec.email === undefined) throw invalid('spec.email', 'required');
    const groups = current.spec?.groups ?? [];
    if (input.spec.groups !== undefined && JSON.stringify(input.spec.groups) !== JSON.stringify(groups))
      throw invalid(
        'spec.groups',
        'not changed here: they become Kubernetes groups; an administrator sets them with kubectl',
      );
    const role = this.#takeRole(input);
    const run = async () => {
      const currentRole = await this.#roles.globalRoleOf(current);
      const newRole = role && role !== currentRole ? role : undefined;
      if (newRole) {
        // As the original: changing a global role needs `update` on users, also for oneself.
        await this.#authorize(caller, 'update', name);
        await this.#checkRole(caller, newRole, name);
        if (currentRole === PLATFORM_ADMIN) await this.#keepAnAdmin(current, 'demoting');
      }
      const { groups: _groups, ...spec } = input.spec;
      // The stored hash, groups, status and login ledger stay; a password in the body is ignored, as the
      // original does.
      const change = (stored: UserObject): UserObject => {
        const annotations = { ...input.annotations };
        const ledger = stored.metadata.annotations?.[this.#ledgerAnnotation];
        if (ledger === undefined) delete annotations[this.#ledgerAnnotation];
        else annotations[this.#ledgerAnnotation] = ledger;
        return {
          ...stored,
          metadata: { ...stored.metadata, labels: input.labels ?? {}, annotations },
          spec: {
            ...spec,
            ...(stored.spec?.password ? { password: stored.spec.password } : {}),
            ...(stored.spec?.groups ? { groups: stored.spec.groups } : {}),
          },
        };
      };
      // A resourceVersion sent is a precondition; without one, the change applies to the current object.
      const resourceVersion = input.resourceVersion;
      const updated = resourceVersion
        ? await this.#accounts.replace(withVersion(change(current), resourceVersion))
        : await this.#accounts.update(name, change);
      if (!updated) throw notFound(this.#group, name);
      if (newRole) {
        await this.#bindings.setGlobalRole(name, newRole);
        await this.#roleShown(name, newRole);
      }
      return this.#view(updated, newRole ?? currentRole);
    };
    return role ? this.#serialized(run) : run();
  }

  async changePassword(caller: Identity, name: string, body: unknown): Promise<typeof SUCCESS> {
    const change = readPasswordChange(body);
    const manager =
      (await this.#allowed(caller, { verb: 'update', resource: 'users', subresource: 'password', name })) ||
      (await this.#allowed(caller, { verb: 'update', resource: 'users', name }));
    const self = caller.username === name;
    if (!self && !manager)
      throw new ApiError(
        'Forbidden',
        `users.${this.#group} "${name}" is forbidden: changing another user's password needs RBAC update on users/password`,
        {
          details: { name, group: this.#group, kind: 'users' },
        },
      );
    const user = await this.#users.get(name);
    if (!user) throw notFound(this.#group, name);
    // As the original: only a user manager may skip the current password, and one given is always checked.
    if (!manager || change.currentPassword !== undefined) {
      if (change.currentPassword === undefined)
        throw invalid('currentPassword', 'required to change one’s own password');
      if (!(await this.#accounts.verifyPassword(user, change.currentPassword)))
        throw new ApiError('BadRequest', 'incorrect old password', {
          details: {
            causes: [{ reason: 'FieldValueInvalid', message: 'incorrect', field: 'currentPassword' }],
          },
        });
    }
    if (!(await this.#accounts.setPassword(name, change.password))) throw notFound(this.#group, name);
    // Every other session ends: whoever held the old password is out; the caller's own session stays.
    await this.#accounts.endSessions(name, self ? caller.sessionId : undefined);
    return SUCCESS;
  }

  async delete(caller: Identity, name: string): Promise<typeof SUCCESS> {
    await this.#authorize(caller, 'delete', name);
    return this.#serialized(async () => {
      const user = await this.#users.get(name);
      if (!user) throw notFound(this.#group, name);
      if ((await this.#roles.globalRoleOf(user)) === PLATFORM_ADMIN)
        await this.#keepAnAdmin(user, 'deleting');
      // Sessions first (access ends at once), then the bindings, the user last: a failure part-way is
      // finished by deleting again, since the user is still there to name.
      await this.#accounts.endSessions(name);
      await this.#bindings.removeAll(name);
      await this.#accounts.remove(name);
      return SUCCESS;
    });
  }

  /** The `iam.<platform>.io/globalrole` annotation, taken out of what is stored (the binding carries it). */
  #takeRole(input: UserInput): string | undefined {
    const role = input.annotations[this.#words.globalRole];
    delete input.annotations[this.#words.globalRole];
    return role || undefined;
  }

  /**
   * The role exists as a GlobalRole, and the caller may bind it: RBAC `create` `globalrolebindings`, and
   * (no escalation) Kubernetes lets the caller create the ClusterRoleBinding it becomes (a dry run).
   */
  async #checkRole(caller: Identity, role: string, username: string): Promise<void> {
    if (!this.#cache.ready || this.#cache.model === undefined)
      throw new ApiError('Unavailable', 'the role model is not known yet (its caches are starting)', {
        retryAfterSeconds: 1,
      });
    if (this.#cache.model !== 'original')
      throw invalid(
        `metadata.annotations[${this.#words.globalRole}]`,
        `platform roles (globalroles.${this.#group}) are not installed; grant access with Kubernetes RBAC instead`,
      );
    if (!this.#cache.role('global', role))
      throw new ApiError('NotFound', `globalroles.${this.#group} "${role}" not found`, {
        details: { name: role, group: this.#group, kind: 'globalroles' },
      });
    await this.#reviewer.authorize(caller, {
      verb: 'create',
      group: this.#group,
      resource: 'globalrolebindings',
    });
    await this.#escalation?.globalRoleBinding(caller, role, [{ kind: 'User', name: username }]);
  }

  /** 409 when `user` is the last active platform administrator. */
  async #keepAnAdmin(user: UserObject, doing: string): Promise<void> {
    for (const other of this.#users.list()) {
      if (other.metadata.name === user.metadata.name || stateOf(other) === 'Disabled') continue;
      if ((await this.#roles.globalRoleOf(other)) === PLATFORM_ADMIN) return;
    }
    throw new ApiError(
      'Conflict',
      `user "${user.metadata.name}" is the last platform administrator (global role ${PLATFORM_ADMIN}): ${doing} it would leave the platform without one`,
      { details: { name: user.metadata.name, group: this.#group, kind: 'users' } },
    );
  }

  #serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#adminChanges.then(work, work);
    this.#adminChanges = next.catch(() => undefined);
    return next;
  }

  async #authorize(caller: Identity, verb: string, name?: string): Promise<void> {
    await this.#reviewer.authorize(caller, {
      verb,
      group: this.#group,
      resource: 'users',
      ...(name ? { name } : {}),
    });
  }

  async #allowed(
    caller: Identity,
    attributes: { verb: string; resource: string; subresource?: string; name: string },
  ): Promise<boolean> {
    try {
      return (await this.#reviewer.check(caller, { ...attributes, group: this.#group })).allowed;
    } catch {
      throw new ApiError('Unavailable', 'authorization check is temporarily unavailable', {
        retryAfterSeconds: 1,
      });
    }
  }

  /**
   * Waits (bounded) until the role cache, which the users list reads, shows the user's new platform
   * role: a client that lists users right after the answer (the console does) sees the change.
   */
  async #roleShown(username: string, role: string): Promise<void> {
    await this.#cache.until(
      () => this.#cache.globalRoleOf(username)?.metadata.name === role,
      WRITE_VISIBLE_MS,
    );
  }

  #view(user: UserObject, globalRole: string | undefined): UserObject {
    return publicUser(user, {
      ledgerAnnotation: this.#ledgerAnnotation,
      globalRoleAnnotation: this.#words.globalRole,
      globalRole,
    });
  }
}

function withVersion(user: UserObject, resourceVersion: string): UserObject {
  return { ...user, metadata: { ...user.metadata, resourceVersion } };
}
