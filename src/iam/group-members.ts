import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { parseListQuery, type RawQuery } from '../list-query/list-query.ts';
import { matchesMetadata, sortAndPage, type Page } from '../list-query/metadata-page.ts';
import type { UserAccounts } from '../users/user-accounts.ts';
import type { UserDirectory } from '../users/user-directory.ts';
import type { GroupAccess } from './group-access.ts';
import type { GroupBindingObject, GroupCache, GroupObject } from './group-cache.ts';
import { alreadyExists, checkName, isRecord, listOf, text } from './group-input.ts';
import type { IamKube } from './iam-kube.ts';
import { notFound as userNotFound } from './member-roles.ts';
import { invalid } from './member-writes.ts';
import { notFound } from './scope-access.ts';

/** One user added to one group, as the original's console sends it. */
export interface GroupMember {
  userName: string;
  groupName: string;
}

/**
 * The members of a workspace's groups, as the original keeps them (`pkg/models/iam/group`,
 * `pkg/controller/groupbinding`): a GroupBinding per user and group, named `{group}-{user}-` + a
 * generated suffix, labelled `iam.<p>.io/user-ref`, `iam.<p>.io/group-ref` and `<p>.io/workspace`, and
 * the group in the User's `spec.groups` — which this server sends as a Kubernetes group when it acts as
 * the user, so the group's role bindings apply in Kubernetes RBAC. The original's controller manager
 * wrote `spec.groups`; here the server does, right after the binding (and, when a binding goes, first,
 * so access never outlives membership). Authorized by `GroupAccess`, written with the server's account.
 */
export class GroupMembers {
  readonly #cache: GroupCache;
  readonly #access: GroupAccess;
  readonly #kube: IamKube;
  readonly #users: UserDirectory;
  readonly #accounts: UserAccounts;
  readonly #iamGroup: string;
  readonly #userRef: string;
  readonly #groupRef: string;
  readonly #workspaceLabel: string;
  readonly #alias: string;

  constructor(deps: {
    cache: GroupCache;
    access: GroupAccess;
    kube: IamKube;
    users: UserDirectory;
    accounts: UserAccounts;
    platformName: string;
  }) {
    this.#cache = deps.cache;
    this.#access = deps.access;
    this.#kube = deps.kube;
    this.#users = deps.users;
    this.#accounts = deps.accounts;
    this.#iamGroup = `iam.${deps.platformName}.io`;
    this.#userRef = `${this.#iamGroup}/user-ref`;
    this.#groupRef = `${this.#iamGroup}/group-ref`;
    this.#workspaceLabel = `${deps.platformName}.io/workspace`;
    this.#alias = `${deps.platformName}.io/alias-name`;
  }

  /** The workspace's GroupBindings (the v1alpha3 envelope and list query; the console selects by `group-ref` and `user-ref`). */
  async list(caller: Identity, workspace: string, raw: RawQuery): Promise<Page<GroupBindingObject>> {
    await this.#access.read(caller, workspace, {
      verb: 'list',
      group: this.#iamGroup,
      resource: 'groupbindings',
    });
    this.#ready();
    const query = parseListQuery(raw);
    const selected = this.#cache
      .bindings()
      .filter(
        (b) =>
          b.metadata.labels?.[this.#workspaceLabel] === workspace && matchesMetadata(b, query, this.#alias),
      );
    return sortAndPage(selected, query);
  }

  /**
   * Adds each user to its group: every group (of this workspace) and user is checked before anything is
   * written. A user already in the group → 409; a binding whose user lacks the group in `spec.groups`
   * (a write cut short) is completed instead.
   */
  async add(caller: Identity, workspace: string, body: unknown): Promise<GroupBindingObject[]> {
    const members = parseGroupMembers(body);
    await this.#access.write(caller, workspace, 'create', 'groupbindings');
    this.#installed();
    const seen = new Set<string>();
    for (const [i, m] of members.entries()) {
      const key = `${m.groupName}\n${m.userName}`;
      if (seen.has(key))
        throw invalid(`[${i}]`, `user "${m.userName}" is listed twice for group "${m.groupName}"`);
      seen.add(key);
    }
    const existing = await this.#workspaceBindings(workspace);
    const plans: { member: GroupMember; binding: GroupBindingObject | undefined }[] = [];
    for (const m of members) {
      await this.groupOf(workspace, m.groupName);
      const user = await this.#users.get(m.userName);
      if (!user) throw userNotFound(this.#iamGroup, m.userName);
      const binding = existing.find(
        (b) => b.groupRef?.name === m.groupName && (b.users ?? []).includes(m.userName),
      );
      if (binding && (user.spec?.groups ?? []).includes(m.groupName))
        throw alreadyExists(
          this.#iamGroup,
          'groupbindings',
          binding.metadata.name,
          `user "${m.userName}" is already a member of group "${m.groupName}" (groupbinding "${binding.metadata.name}"); no member was added`,
        );
      plans.push({ member: m, binding });
    }
    const done: GroupBindingObject[] = [];
    for (const { member, binding } of plans) {
      try {
        const made = binding ?? (await this.#create(workspace, member));
        await this.#setGroup(member.userName, member.groupName, true);
        done.push(made);
      } catch (err) {
        const added = done.map((b) => b.users?.[0]).join(', ') || 'none';
        const message = err instanceof ApiError ? err.message : String(err);
        throw new ApiError(
          err instanceof ApiError ? err.kind : 'BadGateway',
          `${message}; added: ${added}; sending the same list again completes it`,
        );
      }
    }
    return done;
  }

  /** The binding removed: its users leave the group first (unless another binding keeps them in), then the object goes. */
  async remove(caller: Identity, workspace: string, name: string): Promise<void> {
    await this.#access.write(caller, workspace, 'delete', 'groupbindings');
    this.#installed();
    const binding = await this.#kube.get<GroupBindingObject>(this.#path(name));
    if (!binding || binding.metadata.labels?.[this.#workspaceLabel] !== workspace)
      throw notFound(this.#iamGroup, 'groupbindings', name);
    await this.#unbind(binding);
  }

  /** Every member of the group removed (its GroupBindings and the group in their users): a group being deleted. */
  async removeAllOf(group: string): Promise<void> {
    const selector = encodeURIComponent(`${this.#groupRef}=${group}`);
    const labelled = await this.#kube.items<GroupBindingObject>(
      `/apis/${this.#iamGroup}/v1alpha2/groupbindings?labelSelector=${selector}`,
    );
    for (const binding of labelled) await this.#unbind(binding);
  }

  /** A Group of the workspace (one labelled with another is unknown here, as in the original). */
  async groupOf(workspace: string, name: string): Promise<GroupObject> {
    const group = await this.#kube.get<GroupObject>(
      `/apis/${this.#iamGroup}/v1alpha2/groups/${encodeURIComponent(name)}`,
    );
    if (!group || group.metadata.labels?.[this.#workspaceLabel] !== workspace)
      throw notFound(this.#iamGroup, 'groups', name);
    return group;
  }

  async #unbind(binding: GroupBindingObject): Promise<void> {
    const group = binding.groupRef?.name;
    if (group) {
      const others = (
        await this.#kube.items<GroupBindingObject>(`/apis/${this.#iamGroup}/v1alpha2/groupbindings`)
      )
        .filter((b) => b.metadata.name !== binding.metadata.name && b.groupRef?.name === group)
        .flatMap((b) => b.users ?? []);
      for (const user of binding.users ?? [])
        if (!others.includes(user)) await this.#setGroup(user, group, false);
    }
    await this.#kube.delete(
      this.#path(binding.metadata.name),
      `deleting groupbinding ${binding.metadata.name}`,
    );
  }

  async #create(workspace: string, member: GroupMember): Promise<GroupBindingObject> {
    const body: GroupBindingObject = {
      apiVersion: `${this.#iamGroup}/v1alpha2`,
      kind: 'GroupBinding',
      metadata: {
        name: '',
        generateName: `${member.groupName}-${member.userName}-`,
        labels: {
          [this.#userRef]: member.userName,
          [this.#groupRef]: member.groupName,
          [this.#workspaceLabel]: workspace,
        },
      },
      users: [member.userName],
      // As the original writes it (its kind is the plural).
      groupRef: { apiGroup: this.#iamGroup, kind: 'groups', name: member.groupName },
    };
    const { name: _, ...metadata } = body.metadata;
    return this.#kube.write<GroupBindingObject>(
      'POST',
      `/apis/${this.#iamGroup}/v1alpha2/groupbindings`,
      `adding ${member.userName} to group ${member.groupName}`,
      { body: { ...body, metadata } },
    );
  }

  /** The group added to (or taken out of) the user's `spec.groups`; a user that is gone is left alone. */
  async #setGroup(username: string, group: string, member: boolean): Promise<void> {
    await this.#accounts.update(username, (user) => {
      const groups = user.spec?.groups ?? [];
      if (groups.includes(group) === member) return user;
      const next = member ? [...groups, group] : groups.filter((g) => g !== group);
      return { ...user, spec: { ...user.spec, groups: next } };
    });
  }

  async #workspaceBindings(workspace: string): Promise<GroupBindingObject[]> {
    const selector = encodeURIComponent(`${this.#workspaceLabel}=${workspace}`);
    return this.#kube.items<GroupBindingObject>(
      `/apis/${this.#iamGroup}/v1alpha2/groupbindings?labelSelector=${selector}`,
    );
  }

  #path(name: string): string {
    return `/apis/${this.#iamGroup}/v1alpha2/groupbindings/${encodeURIComponent(name)}`;
  }

  #installed(): void {
    if (this.#cache.installed === false) throw notInstalled(this.#iamGroup, 'groupbindings');
  }

  #ready(): void {
    if (!this.#cache.ready)
      throw new ApiError('Unavailable', 'the group caches are starting', { retryAfterSeconds: 1 });
    this.#installed();
  }
}

export function notInstalled(group: string, resource: string): ApiError {
  return new ApiError('NotFound', `the resource ${resource}.${group} is not installed in this cluster`, {
    details: { group, kind: resource },
  });
}

/** The body of `POST groupbindings`: a JSON list of `{userName, groupName}`. */
export function parseGroupMembers(body: unknown): GroupMember[] {
  return listOf(body, '{"userName", "groupName"}').map((item, i) => {
    if (!isRecord(item)) throw invalid(`[${i}]`, `[${i}] must be an object {"userName", "groupName"}`);
    return {
      userName: checkName(text(item, 'userName', `[${i}].userName`), `[${i}].userName`),
      groupName: checkName(text(item, 'groupName', `[${i}].groupName`), `[${i}].groupName`),
    };
  });
}
