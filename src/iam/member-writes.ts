import type { KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import type { AccessReviewer } from '../access/access-review.ts';
import { http1Dispatcher, kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import type { UserDirectory } from '../users/user-directory.ts';
import { notFound as userNotFound } from './member-roles.ts';
import type { RoleCache } from './role-cache.ts';
import type { BindingObject, RoleObject } from './role-objects.ts';
import { notFound } from './scope-access.ts';
import { memberShown } from './written-visible.ts';

/** One member of an invite or a role change, as the original's console sends it. */
export interface Member {
  username: string;
  roleRef: string;
}

/** A scope whose members are Kubernetes RBAC bindings: the cluster, or one namespace (project). */
export type RbacPlace = { scope: 'cluster' } | { scope: 'namespace'; namespace: string };

/** What is read of a Namespace: its labels. */
interface NamespaceObject {
  metadata: RoleObject['metadata'];
}

const RBAC = 'rbac.authorization.k8s.io';
const RBAC_V1 = `/apis/${RBAC}/v1`;

/**
 * Invites, role changes and removals of the members of the cluster and of a project, as the original
 * makes them (`pkg/models/iam/am`): one binding per member named `{user}-{role}`, labelled
 * `iam.<p>.io/user-ref: {user}`, the member's other bindings at that scope removed. Every write is made
 * **as the caller** (impersonated), so Kubernetes RBAC decides it, with its escalation prevention: a
 * caller cannot bind a role granting what they do not hold. A SubjectAccessReview first answers 403 to
 * a caller without the verb on the bindings, before anything about users or roles is told.
 *
 * An invite of several members is checked whole before anything is written — every user and role
 * exists, each user is a member of the project's workspace, and each binding passes a dry-run create as
 * the caller (escalation included) — so a refusal writes nothing. Only a failure between the real
 * writes (a concurrent change, the kube-apiserver going away) can leave part done; the error then names
 * who was added and who was not.
 */
export class RbacMemberWrites {
  readonly #kc: KubeConfig;
  readonly #reviewer: AccessReviewer;
  readonly #users: UserDirectory;
  readonly #userRef: string;
  readonly #workspaceLabel: string;
  readonly #workspaceBindings: string;
  readonly #timeoutMs: number;
  readonly #cache: RoleCache;
  #dispatcher: Promise<Dispatcher> | undefined;

  constructor(deps: {
    kubeConfig: KubeConfig;
    reviewer: AccessReviewer;
    users: UserDirectory;
    platformName: string;
    timeoutMs: number;
    /** The role cache the member lists read: a write answers once it shows the write. */
    cache: RoleCache;
  }) {
    this.#cache = deps.cache;
    this.#kc = deps.kubeConfig;
    this.#reviewer = deps.reviewer;
    this.#users = deps.users;
    this.#userRef = `iam.${deps.platformName}.io/user-ref`;
    this.#workspaceLabel = `${deps.platformName}.io/workspace`;
    this.#workspaceBindings = `/apis/iam.${deps.platformName}.io/v1alpha2/workspacerolebindings`;
    this.#timeoutMs = deps.timeoutMs;
  }

  /** Binds each member to its role here, replacing their other bindings at this scope; all or nothing checked. */
  async invite(caller: Identity, place: RbacPlace, members: readonly Member[]): Promise<Member[]> {
    await this.#authorize(caller, place, 'create');
    const namespace = await this.#namespace(place);
    const seen = new Set<string>();
    for (const [i, m] of members.entries()) {
      if (seen.has(m.username))
        throw invalid(`[${i}].username`, `user "${m.username}" is listed more than once`);
      seen.add(m.username);
    }
    for (const m of members) {
      if (!(await this.#users.get(m.username))) throw userNotFound(this.#users.iam.group, m.username);
      await this.#roleExists(place, m.roleRef);
    }
    await this.#inWorkspace(namespace, members);
    const bindings = await this.#bindings(place);
    const plans = members.map((m) => ({ member: m, ...this.#plan(place, bindings, m) }));
    for (const { member, create } of plans) {
      if (!create) continue;
      try {
        await this.#write(caller, 'POST', `${this.#collection(place)}?dryRun=All`, create);
      } catch (err) {
        throw asApiError(err, `no member was added: binding ${member.username} to ${member.roleRef}`);
      }
    }
    const done: string[] = [];
    for (const { member, create, replaced } of plans) {
      try {
        if (create) await this.#write(caller, 'POST', this.#collection(place), create);
        for (const binding of replaced) await this.#unbind(caller, place, binding, member.username);
      } catch (err) {
        const left = plans.map((p) => p.member.username).filter((u) => !done.includes(u));
        throw asApiError(
          err,
          `added: ${done.length ? done.join(', ') : 'none'}; not added (or not yet moved off their other role): ${left.join(', ')}`,
        );
      }
      done.push(member.username);
    }
    for (const m of members) await this.#shown(place, m.username, m.roleRef);
    return members.map((m) => ({ username: m.username, roleRef: m.roleRef }));
  }

  /** The member's role here changed to `member.roleRef` (the original: the same as inviting them). */
  async change(caller: Identity, place: RbacPlace, username: string, member: Member): Promise<Member> {
    if (member.username !== username)
      throw invalid(
        'username',
        `the name of the object (${member.username}) does not match the name on the URL (${username})`,
      );
    const [changed] = await this.invite(caller, place, [member]);
    return changed ?? member;
  }

  /** Every binding of the user at this scope removed (a binding shared with others: the user taken out). */
  async remove(caller: Identity, place: RbacPlace, username: string): Promise<void> {
    await this.#authorize(caller, place, 'delete');
    await this.#namespace(place);
    const bindings = (await this.#bindings(place)).filter((b) => namesUser(b, username));
    if (bindings.length === 0) {
      if (!(await this.#users.get(username))) throw userNotFound(this.#users.iam.group, username);
      throw new ApiError('NotFound', `user "${username}" is not a member of ${describe(place)}`, {
        details: { name: username, group: this.#users.iam.group, kind: 'users' },
      });
    }
    try {
      for (const binding of bindings) await this.#unbind(caller, place, binding, username);
    } catch (err) {
      throw asApiError(err, `removing ${username} from ${describe(place)}`);
    }
    await this.#shown(place, username, undefined);
  }

  /** Waits (bounded) until the member lists, read from the role cache, show this write. */
  async #shown(place: RbacPlace, username: string, role: string | undefined): Promise<void> {
    const at = place.scope === 'namespace' ? place.namespace : '';
    await memberShown(this.#cache, place.scope, at, username, role);
  }

  async #authorize(caller: Identity, place: RbacPlace, verb: 'create' | 'delete'): Promise<void> {
    await this.#reviewer.authorize(
      caller,
      place.scope === 'cluster'
        ? { verb, group: RBAC, resource: 'clusterrolebindings' }
        : { verb, group: RBAC, resource: 'rolebindings', namespace: place.namespace },
    );
  }

  /** The project's Namespace (404 when there is none); nothing at cluster scope. */
  async #namespace(place: RbacPlace): Promise<NamespaceObject | undefined> {
    if (place.scope === 'cluster') return undefined;
    const found = await this.#get<NamespaceObject>(
      `/api/v1/namespaces/${encodeURIComponent(place.namespace)}`,
    );
    if (!found) throw notFound('', 'namespaces', place.namespace);
    return found;
  }

  async #roleExists(place: RbacPlace, role: string): Promise<void> {
    const path =
      place.scope === 'cluster'
        ? `${RBAC_V1}/clusterroles/${encodeURIComponent(role)}`
        : `${RBAC_V1}/namespaces/${encodeURIComponent(place.namespace)}/roles/${encodeURIComponent(role)}`;
    if (!(await this.#get(path)))
      throw notFound(RBAC, place.scope === 'cluster' ? 'clusterroles' : 'roles', role);
  }

  /**
   * A project of a workspace takes only the workspace's members (a WorkspaceRoleBinding naming the user,
   * labelled with the workspace), as the original's console offers them. Where WorkspaceRoleBindings
   * are not installed there are no workspace members to require.
   */
  async #inWorkspace(namespace: NamespaceObject | undefined, members: readonly Member[]): Promise<void> {
    const workspace = namespace?.metadata.labels?.[this.#workspaceLabel];
    if (!workspace) return;
    const selector = encodeURIComponent(`${this.#workspaceLabel}=${workspace}`);
    const list = await this.#get<{ items: BindingObject[] }>(
      `${this.#workspaceBindings}?labelSelector=${selector}`,
    );
    if (!list) return;
    const outside = members.filter((m) => !list.items.some((b) => namesUser(b, m.username)));
    if (outside.length === 0) return;
    const who = outside.map((m) => `"${m.username}"`).join(', ');
    throw new ApiError(
      'BadRequest',
      `user ${who} is not a member of workspace "${workspace}": invite them to the workspace first; no member was added`,
      {
        details: {
          causes: outside.map((m) => ({
            reason: 'FieldValueInvalid',
            message: `user "${m.username}" is not a member of workspace "${workspace}"`,
            field: 'username',
          })),
        },
      },
    );
  }

  /** What inviting `member` writes: the binding to create (none when one already binds that role) and the ones to leave. */
  #plan(
    place: RbacPlace,
    bindings: readonly BindingObject[],
    member: Member,
  ): { create: BindingObject | undefined; replaced: BindingObject[] } {
    const kind = place.scope === 'cluster' ? 'ClusterRole' : 'Role';
    const own = bindings.filter((b) => namesUser(b, member.username));
    const keep = own.find((b) => b.roleRef.kind === kind && b.roleRef.name === member.roleRef);
    const replaced = own.filter((b) => b !== keep);
    if (keep) return { create: undefined, replaced };
    const create: BindingObject & { apiVersion: string; kind: string } = {
      apiVersion: `${RBAC}/v1`,
      kind: place.scope === 'cluster' ? 'ClusterRoleBinding' : 'RoleBinding',
      metadata: {
        name: `${member.username}-${member.roleRef}`,
        ...(place.scope === 'namespace' ? { namespace: place.namespace } : {}),
        labels: { [this.#userRef]: member.username },
      },
      subjects: [{ kind: 'User', apiGroup: RBAC, name: member.username }],
      roleRef: { apiGroup: RBAC, kind, name: member.roleRef },
    };
    return { create, replaced };
  }

  /** Takes the user off a binding as the caller: the binding deleted, or, when it names others too, the user removed from it. */
  async #unbind(caller: Identity, place: RbacPlace, binding: BindingObject, username: string): Promise<void> {
    const path = `${this.#collection(place)}/${encodeURIComponent(binding.metadata.name)}`;
    const others = (binding.subjects ?? []).filter((s) => !(s.kind === 'User' && s.name === username));
    try {
      if (others.length === 0) await this.#write(caller, 'DELETE', path);
      else await this.#write(caller, 'PUT', path, { ...binding, subjects: others });
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return;
      throw err;
    }
  }

  #collection(place: RbacPlace): string {
    return place.scope === 'cluster'
      ? `${RBAC_V1}/clusterrolebindings`
      : `${RBAC_V1}/namespaces/${encodeURIComponent(place.namespace)}/rolebindings`;
  }

  /** The scope's bindings, read fresh (a caches' lag would miss a binding just written). */
  async #bindings(place: RbacPlace): Promise<BindingObject[]> {
    return (await this.#get<{ items: BindingObject[] }>(this.#collection(place)))?.items ?? [];
  }

  /** A read with the server's own credentials; undefined on 404. */
  async #get<T>(path: string): Promise<T | undefined> {
    try {
      return await kubeRequest<T>(this.#kc, path, { timeoutMs: this.#timeoutMs });
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return undefined;
      throw asApiError(err, 'reading the members');
    }
  }

  async #write(
    caller: Identity,
    method: 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<void> {
    this.#dispatcher ??= http1Dispatcher(this.#kc).catch((err: unknown) => {
      this.#dispatcher = undefined;
      throw err;
    });
    await kubeRequest(this.#kc, path, {
      method,
      ...(body === undefined ? {} : { body }),
      timeoutMs: this.#timeoutMs,
      impersonate: caller,
      dispatcher: await this.#dispatcher,
    });
  }
}

/** Whether a binding names this user. */
export function namesUser(binding: BindingObject, username: string): boolean {
  return (binding.subjects ?? []).some((s) => s.kind === 'User' && s.name === username);
}

function describe(place: RbacPlace): string {
  return place.scope === 'cluster' ? 'the cluster' : `namespace "${place.namespace}"`;
}

export function invalid(field: string, message: string): ApiError {
  return new ApiError('BadRequest', message, {
    details: { causes: [{ reason: 'FieldValueInvalid', message, field }] },
  });
}

/** The kube-apiserver's refusal in our terms, its own message after what was being done. */
export function asApiError(err: unknown, doing: string): ApiError {
  if (err instanceof ApiError) return err;
  if (!(err instanceof KubeRequestError)) {
    return new ApiError('Unavailable', `${doing}: the kube-apiserver could not be reached`, {
      retryAfterSeconds: 1,
    });
  }
  const message = `${doing}: ${err.statusMessage ?? `HTTP ${err.statusCode}`}`;
  switch (err.statusCode) {
    case 400:
    case 422:
      return new ApiError('BadRequest', message);
    case 403:
      return new ApiError('Forbidden', message);
    case 404:
      return new ApiError('NotFound', message);
    case 409:
      return new ApiError(err.statusReason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict', message);
    default:
      return new ApiError('BadGateway', message);
  }
}

/** The body of an invite: a JSON list of `{username, roleRef}` (a role change: one such object). */
export function parseMembers(value: unknown): Member[] {
  if (!Array.isArray(value)) throw invalid('', 'the body must be a JSON list of {"username", "roleRef"}');
  return value.map((item, i) => parseMember(item, `[${i}].`));
}

export function parseMember(value: unknown, at = ''): Member {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(at.replace(/\.$/, ''), `${at || 'the body'} must be an object {"username", "roleRef"}`);
  const record = value as Record<string, unknown>;
  const field = (name: 'username' | 'roleRef'): string => {
    const v = record[name];
    if (typeof v !== 'string' || v === '')
      throw invalid(`${at}${name}`, `${at}${name} must be a non-empty string`);
    return v;
  };
  const username = field('username');
  if (username.length > 253 || !DNS1123_SUBDOMAIN.test(username))
    throw invalid(
      `${at}username`,
      `${at}username must be a user name (a DNS-1123 subdomain: lower case letters, digits, '-' and '.'), not ${JSON.stringify(username)}`,
    );
  const roleRef = field('roleRef');
  if (!isPathSegmentName(roleRef))
    throw invalid(`${at}roleRef`, `${at}roleRef must be a role name (no '/' or '%', not '.' or '..')`);
  return { username, roleRef };
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** What Kubernetes accepts as the name of an RBAC role: any path segment (ClusterRoles such as `system:…`). */
export function isPathSegmentName(name: string): boolean {
  return name !== '.' && name !== '..' && !/[/%]/.test(name);
}
