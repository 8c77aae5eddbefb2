import type { KubeConfig } from '@kubernetes/client-node';
import { forbidden, type AccessReviewer, type ResourceAttributes } from '../access/access-review.ts';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import type { UserDirectory } from '../users/user-directory.ts';
import { notFound as userNotFound } from './member-roles.ts';
import type { EscalationCheck } from './escalation-check.ts';
import { asApiError, invalid, namesUser, type Member } from './member-writes.ts';
import type { RoleCache } from './role-cache.ts';
import type { BindingObject, RoleObject } from './role-objects.ts';
import { notFound } from './scope-access.ts';
import { memberShown } from './written-visible.ts';

const RBAC = 'rbac.authorization.k8s.io';

/**
 * Invites, role changes and removals of a workspace's members, as the original makes them
 * (`pkg/models/iam/am`): one WorkspaceRoleBinding per member named `{user}-{role}` (its roles are named
 * `{workspace}-admin`, …), labelled `iam.<p>.io/user-ref` and `<p>.io/workspace`, the member's other
 * bindings in the workspace removed. Kubernetes has no workspace scope to impersonate the caller in, so
 * the caller is authorized first — RBAC `create`/`update`/`delete` `workspacerolebindings` in
 * `iam.<p>.io` (a SubjectAccessReview as the caller), or the caller is bound to the workspace's admin
 * role `{workspace}-admin` — and the server writes. Removing a member also deletes their own RoleBindings
 * in the workspace's projects (a project takes only the workspace's members), before the workspace
 * bindings go, so a failure half way never leaves project access without workspace membership.
 */
export class WorkspaceMemberWrites {
  readonly #kc: KubeConfig;
  readonly #reviewer: AccessReviewer;
  readonly #users: UserDirectory;
  readonly #iamGroup: string;
  readonly #tenantGroup: string;
  readonly #userRef: string;
  readonly #workspaceLabel: string;
  readonly #timeoutMs: number;
  readonly #cache: RoleCache;
  readonly #escalation: EscalationCheck | undefined;

  constructor(deps: {
    kubeConfig: KubeConfig;
    reviewer: AccessReviewer;
    users: UserDirectory;
    platformName: string;
    timeoutMs: number;
    /** The role cache the member lists read: a write answers once it shows the write. */
    cache: RoleCache;
    /** Refuses binding a role whose rules the caller does not hold in the workspace's projects (403). */
    escalation?: EscalationCheck;
  }) {
    this.#cache = deps.cache;
    this.#escalation = deps.escalation;
    this.#kc = deps.kubeConfig;
    this.#reviewer = deps.reviewer;
    this.#users = deps.users;
    this.#iamGroup = `iam.${deps.platformName}.io`;
    this.#tenantGroup = `tenant.${deps.platformName}.io`;
    this.#userRef = `iam.${deps.platformName}.io/user-ref`;
    this.#workspaceLabel = `${deps.platformName}.io/workspace`;
    this.#timeoutMs = deps.timeoutMs;
  }

  /** Binds each member to its workspace role, replacing their other bindings there; all checked before any write. */
  async invite(
    caller: Identity,
    workspace: string,
    members: readonly Member[],
    verb: 'create' | 'update' = 'create',
  ): Promise<Member[]> {
    const bindings = await this.#authorize(caller, workspace, verb);
    await this.#workspaceExists(workspace);
    const seen = new Set<string>();
    for (const [i, m] of members.entries()) {
      if (seen.has(m.username))
        throw invalid(`[${i}].username`, `user "${m.username}" is listed more than once`);
      seen.add(m.username);
    }
    const roles = new Map<string, RoleObject>();
    for (const m of members) {
      if (!(await this.#users.get(m.username))) throw userNotFound(this.#users.iam.group, m.username);
      roles.set(m.roleRef, await this.#roleExists(workspace, m.roleRef));
    }
    await this.#noEscalation(caller, workspace, [...roles.values()]);
    const done: string[] = [];
    for (const member of members) {
      try {
        const own = bindings.filter((b) => namesUser(b, member.username));
        const keep = own.find((b) => b.roleRef.name === member.roleRef);
        if (!keep) await this.#request('POST', this.#bindingsPath(), this.#binding(workspace, member));
        for (const binding of own) if (binding !== keep) await this.#unbind(binding, member.username);
      } catch (err) {
        const left = members.map((m) => m.username).filter((u) => !done.includes(u));
        throw asApiError(
          err,
          `added: ${done.length ? done.join(', ') : 'none'}; not added (or not yet moved off their other role): ${left.join(', ')}`,
        );
      }
      done.push(member.username);
    }
    for (const m of members) await memberShown(this.#cache, 'workspace', workspace, m.username, m.roleRef);
    return members.map((m) => ({ username: m.username, roleRef: m.roleRef }));
  }

  async change(caller: Identity, workspace: string, username: string, member: Member): Promise<Member> {
    if (member.username !== username)
      throw invalid(
        'username',
        `the name of the object (${member.username}) does not match the name on the URL (${username})`,
      );
    const [changed] = await this.invite(caller, workspace, [member], 'update');
    return changed ?? member;
  }

  /**
   * A WorkspaceRoleBinding becomes a RoleBinding to its role's ClusterRole in every project of the
   * workspace (the RBAC reconciler): the caller must hold the role's rules in each project there is now,
   * as Kubernetes checks for a RoleBinding. A workspace without projects grants nothing in Kubernetes
   * yet: nothing to check.
   */
  async #noEscalation(caller: Identity, workspace: string, roles: readonly RoleObject[]): Promise<void> {
    if (!this.#escalation) return;
    const projects = await this.#projects(workspace);
    if (projects.length === 0) return;
    for (const role of roles)
      await this.#escalation.workspaceRoleBinding(
        caller,
        { name: role.metadata.name, rules: role.rules ?? [] },
        projects,
      );
  }

  /** The names of the workspace's namespaces (labelled with it). */
  async #projects(workspace: string): Promise<string[]> {
    const selector = encodeURIComponent(`${this.#workspaceLabel}=${workspace}`);
    return (
      (
        await this.#get<{ items: { metadata: { name: string } }[] }>(
          `/api/v1/namespaces?labelSelector=${selector}`,
        )
      )?.items ?? []
    ).map((ns) => ns.metadata.name);
  }

  /** The member's bindings in the workspace's projects, then in the workspace, removed. */
  async remove(caller: Identity, workspace: string, username: string): Promise<void> {
    const bindings = (await this.#authorize(caller, workspace, 'delete')).filter((b) =>
      namesUser(b, username),
    );
    await this.#workspaceExists(workspace);
    if (bindings.length === 0) {
      if (!(await this.#users.get(username))) throw userNotFound(this.#users.iam.group, username);
      throw new ApiError('NotFound', `user "${username}" is not a member of workspace "${workspace}"`, {
        details: { name: username, group: this.#users.iam.group, kind: 'users' },
      });
    }
    try {
      for (const project of await this.#projects(workspace)) {
        const path = `/apis/${RBAC}/v1/namespaces/${encodeURIComponent(project)}/rolebindings`;
        const own = ((await this.#get<{ items: BindingObject[] }>(path))?.items ?? []).filter((b) =>
          this.#ownedBy(b, username),
        );
        for (const b of own) await this.#delete(`${path}/${encodeURIComponent(b.metadata.name)}`);
      }
      for (const binding of bindings) await this.#unbind(binding, username);
    } catch (err) {
      throw asApiError(err, `removing ${username} from workspace "${workspace}"`);
    }
    await memberShown(this.#cache, 'workspace', workspace, username, undefined);
  }

  /**
   * Resolves with the workspace's bindings when the caller may write them: RBAC on WorkspaceRoleBindings,
   * or an admin of the workspace. A 403 otherwise, whether or not the workspace exists.
   */
  async #authorize(caller: Identity, workspace: string, verb: string): Promise<BindingObject[]> {
    const attributes: ResourceAttributes = { verb, group: this.#iamGroup, resource: 'workspacerolebindings' };
    let allowed: boolean;
    try {
      allowed = (await this.#reviewer.check(caller, attributes)).allowed;
    } catch {
      throw new ApiError('Unavailable', 'authorization check is temporarily unavailable', {
        retryAfterSeconds: 1,
      });
    }
    const bindings = await this.#workspaceBindings(workspace);
    const admin = `${workspace}-admin`;
    const isAdmin = bindings.some(
      (b) =>
        b.roleRef.name === admin &&
        (b.subjects ?? []).some(
          (s) =>
            (s.kind === 'User' && s.name === caller.username) ||
            (s.kind === 'Group' && caller.groups.includes(s.name)),
        ),
    );
    if (!allowed && !isAdmin) throw forbidden(caller, attributes);
    return bindings;
  }

  async #workspaceExists(workspace: string): Promise<void> {
    const path = `/apis/${this.#tenantGroup}/v1alpha2/workspacetemplates/${encodeURIComponent(workspace)}`;
    if (!(await this.#get(path))) throw notFound(this.#tenantGroup, 'workspacetemplates', workspace);
  }

  /** The WorkspaceRole of that workspace (one labelled with another is unknown here, as in the original). */
  async #roleExists(workspace: string, role: string): Promise<RoleObject> {
    const found = await this.#get<RoleObject>(
      `/apis/${this.#iamGroup}/v1alpha2/workspaceroles/${encodeURIComponent(role)}`,
    );
    if (!found || found.metadata.labels?.[this.#workspaceLabel] !== workspace)
      throw notFound(this.#iamGroup, 'workspaceroles', role);
    return found;
  }

  async #workspaceBindings(workspace: string): Promise<BindingObject[]> {
    const selector = encodeURIComponent(`${this.#workspaceLabel}=${workspace}`);
    return (
      (await this.#get<{ items: BindingObject[] }>(`${this.#bindingsPath()}?labelSelector=${selector}`))
        ?.items ?? []
    );
  }

  /** A project binding that is the user's own: it names only them (the original's member bindings do). */
  #ownedBy(binding: BindingObject, username: string): boolean {
    // Not the RoleBindings the RBAC reconciler made of workspace bindings: they go with those.
    if (binding.metadata.labels?.[`${this.#iamGroup}/generated-from`] !== undefined) return false;
    const subjects = binding.subjects ?? [];
    return subjects.length > 0 && subjects.every((s) => s.kind === 'User' && s.name === username);
  }

  #binding(workspace: string, member: Member): BindingObject & { apiVersion: string; kind: string } {
    return {
      apiVersion: `${this.#iamGroup}/v1alpha2`,
      kind: 'WorkspaceRoleBinding',
      metadata: {
        name: `${member.username}-${member.roleRef}`,
        labels: { [this.#userRef]: member.username, [this.#workspaceLabel]: workspace },
      },
      subjects: [{ kind: 'User', apiGroup: RBAC, name: member.username }],
      roleRef: { apiGroup: this.#iamGroup, kind: 'WorkspaceRole', name: member.roleRef },
    };
  }

  async #unbind(binding: BindingObject, username: string): Promise<void> {
    const path = `${this.#bindingsPath()}/${encodeURIComponent(binding.metadata.name)}`;
    const others = (binding.subjects ?? []).filter((s) => !(s.kind === 'User' && s.name === username));
    if (others.length === 0) await this.#delete(path);
    else await this.#request('PUT', path, { ...binding, subjects: others });
  }

  #bindingsPath(): string {
    return `/apis/${this.#iamGroup}/v1alpha2/workspacerolebindings`;
  }

  async #delete(path: string): Promise<void> {
    try {
      await this.#request('DELETE', path);
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.statusCode === 404)) throw err;
    }
  }

  async #request(method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<void> {
    await kubeRequest(this.#kc, path, {
      method,
      ...(body === undefined ? {} : { body }),
      timeoutMs: this.#timeoutMs,
    });
  }

  /** A read with the server's credentials; undefined on 404 (also where the resource is not installed). */
  async #get<T>(path: string): Promise<T | undefined> {
    try {
      return await kubeRequest<T>(this.#kc, path, { timeoutMs: this.#timeoutMs });
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return undefined;
      throw asApiError(err, 'reading the workspace members');
    }
  }
}
