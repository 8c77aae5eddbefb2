import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import { parseListQuery, type RawQuery } from '../list-query/list-query.ts';
import { matchesMetadata, sortAndPage, type Page } from '../list-query/metadata-page.ts';
import type { GroupAccess } from './group-access.ts';
import type { GroupCache, GroupObject } from './group-cache.ts';
import { checkType, isRecord, stringMap } from './group-input.ts';
import { notInstalled, type GroupMembers } from './group-members.ts';
import type { GroupRoleBindings } from './group-role-bindings.ts';
import type { IamKube } from './iam-kube.ts';
import { invalid } from './member-writes.ts';
import { mergePatch } from './role-writes.ts';
import { notFound } from './scope-access.ts';

/** A generated name must fit a label value (63 characters: the `group-ref` label names the group); Kubernetes adds 5. */
const MAX_GENERATE_NAME = 58;
const GENERATE_NAME = /^[a-z0-9]([-a-z0-9]*)?$/;

/**
 * The groups of a workspace, as the original keeps them (`pkg/models/iam/group`): cluster-scoped Group
 * objects labelled `<p>.io/workspace`, named by the kube-apiserver from `metadata.generateName` (the
 * console's "name", unique in the workspace, shown as the group's name), nested by the label
 * `iam.<p>.io/group-parent` naming the parent group. Authorized by `GroupAccess`; written with the
 * server's account. Deleting a group deletes its subgroups, memberships and role bindings, as the
 * original's controller and garbage collector do — here explicitly, the memberships first, the group
 * last, so a failure part-way is finished by deleting again.
 */
export class Groups {
  readonly #cache: GroupCache;
  readonly #access: GroupAccess;
  readonly #kube: IamKube;
  readonly #members: GroupMembers;
  readonly #roleBindings: GroupRoleBindings;
  readonly #iamGroup: string;
  readonly #workspaceLabel: string;
  readonly #parentLabel: string;
  readonly #alias: string;

  constructor(deps: {
    cache: GroupCache;
    access: GroupAccess;
    kube: IamKube;
    members: GroupMembers;
    roleBindings: GroupRoleBindings;
    platformName: string;
  }) {
    this.#cache = deps.cache;
    this.#access = deps.access;
    this.#kube = deps.kube;
    this.#members = deps.members;
    this.#roleBindings = deps.roleBindings;
    this.#iamGroup = `iam.${deps.platformName}.io`;
    this.#workspaceLabel = `${deps.platformName}.io/workspace`;
    this.#parentLabel = `${this.#iamGroup}/group-parent`;
    this.#alias = `${deps.platformName}.io/alias-name`;
  }

  async list(caller: Identity, workspace: string, raw: RawQuery): Promise<Page<GroupObject>> {
    await this.#read(caller, workspace, 'list');
    const query = parseListQuery(raw);
    const selected = this.#cache
      .groups()
      .filter(
        (g) =>
          g.metadata.labels?.[this.#workspaceLabel] === workspace && matchesMetadata(g, query, this.#alias),
      );
    return sortAndPage(selected, query);
  }

  async get(caller: Identity, workspace: string, name: string): Promise<GroupObject> {
    await this.#read(caller, workspace, 'get', name);
    const group = this.#cache.group(name);
    if (!group || group.metadata.labels?.[this.#workspaceLabel] !== workspace)
      throw notFound(this.#iamGroup, 'groups', name);
    return group;
  }

  /** A new group: `metadata.generateName` required and unique among the workspace's groups (409). */
  async create(caller: Identity, workspace: string, body: unknown): Promise<GroupObject> {
    const group = this.#parse(body, workspace);
    await this.#write(caller, workspace, 'create');
    const metadata = group.metadata;
    if (metadata.name)
      throw invalid(
        'metadata.name',
        'metadata.name is generated from metadata.generateName: leave it out (a chosen name could match a Kubernetes group bound elsewhere)',
      );
    if (metadata.resourceVersion)
      throw invalid('metadata.resourceVersion', 'resourceVersion must not be set on a create');
    const generateName = metadata.generateName;
    if (generateName === undefined || generateName === '')
      throw invalid(
        'metadata.generateName',
        'metadata.generateName: Required value: generateName is required',
      );
    const siblings = await this.#workspaceGroups(workspace);
    if (siblings.some((g) => g.metadata.generateName === generateName))
      throw new ApiError(
        'Conflict',
        `Operation cannot be fulfilled on groups.${this.#iamGroup} "${generateName}": a group named ${generateName} already exists in the workspace`,
        { details: { name: generateName, group: this.#iamGroup, kind: 'groups' } },
      );
    await this.#checkParent(workspace, group, siblings);
    const { name: _, ...rest } = metadata;
    return this.#kube.write<GroupObject>('POST', this.#collection(), `creating group ${generateName}`, {
      body: { ...group, metadata: rest },
    });
  }

  /** The whole group replaced (PUT): the name is the path's; without a resourceVersion the stored one is used. */
  async replace(caller: Identity, workspace: string, name: string, body: unknown): Promise<GroupObject> {
    const group = this.#parse(body, workspace);
    if (group.metadata.name !== name)
      throw invalid(
        'metadata.name',
        `the name of the object (${group.metadata.name ?? ''}) does not match the name on the URL (${name})`,
      );
    await this.#write(caller, workspace, 'update');
    const current = await this.#members.groupOf(workspace, name);
    group.metadata.resourceVersion ??= current.metadata.resourceVersion;
    await this.#checkParent(workspace, group, await this.#workspaceGroups(workspace));
    return this.#kube.write<GroupObject>('PUT', this.#item(name), `replacing group ${name}`, { body: group });
  }

  /** A JSON merge patch (RFC 7386) of the stored group, written whole with its resourceVersion (a race → 409). */
  async patch(caller: Identity, workspace: string, name: string, patch: unknown): Promise<GroupObject> {
    if (!isRecord(patch)) throw invalid('', 'the body must be a JSON merge patch (an object)');
    await this.#write(caller, workspace, 'patch');
    const current = await this.#members.groupOf(workspace, name);
    const group = this.#parse(mergePatch(current, patch), workspace);
    if (group.metadata.name !== name) throw invalid('metadata.name', 'the name of a group cannot be changed');
    await this.#checkParent(workspace, group, await this.#workspaceGroups(workspace));
    return this.#kube.write<GroupObject>('PUT', this.#item(name), `patching group ${name}`, { body: group });
  }

  /** The group and its subgroups (deepest first), each with its memberships and role bindings. */
  async remove(caller: Identity, workspace: string, name: string): Promise<void> {
    await this.#write(caller, workspace, 'delete');
    await this.#members.groupOf(workspace, name);
    const all = await this.#workspaceGroups(workspace);
    for (const group of [...this.#descendants(name, all).reverse(), name]) {
      await this.#members.removeAllOf(group);
      await this.#roleBindings.removeAllOf(group);
      await this.#kube.delete(this.#item(group), `deleting group ${group}`);
    }
  }

  /** The body checked as a Group of this workspace: the workspace label is the server's. */
  #parse(body: unknown, workspace: string): GroupObject {
    if (!isRecord(body)) throw invalid('', 'the body must be a Group object');
    checkType(body, 'Group', [`${this.#iamGroup}/v1alpha2`]);
    const metadata = body['metadata'];
    if (!isRecord(metadata)) throw invalid('metadata', 'metadata must be an object');
    const name = metadata['name'];
    if (name !== undefined && typeof name !== 'string')
      throw invalid('metadata.name', 'metadata.name must be a string');
    const generateName = metadata['generateName'];
    if (
      generateName !== undefined &&
      (typeof generateName !== 'string' ||
        generateName.length > MAX_GENERATE_NAME ||
        (generateName !== '' && !GENERATE_NAME.test(generateName)))
    )
      throw invalid(
        'metadata.generateName',
        `metadata.generateName must be lower case letters, digits and '-', starting with a letter or digit, at most ${MAX_GENERATE_NAME} characters, not ${JSON.stringify(generateName)}`,
      );
    const labels = stringMap(metadata['labels'], 'metadata.labels') ?? {};
    stringMap(metadata['annotations'], 'metadata.annotations');
    return {
      ...body,
      apiVersion: `${this.#iamGroup}/v1alpha2`,
      kind: 'Group',
      metadata: {
        ...(metadata as GroupObject['metadata']),
        labels: { ...labels, [this.#workspaceLabel]: workspace },
      },
    } as GroupObject;
  }

  /** A parent named by `iam.<p>.io/group-parent` is a group of the workspace, and not the group itself or below it. */
  async #checkParent(workspace: string, group: GroupObject, all: GroupObject[]): Promise<void> {
    const parent = group.metadata.labels?.[this.#parentLabel];
    if (parent === undefined) return;
    const field = `metadata.labels[${this.#parentLabel}]`;
    const name = group.metadata.name;
    if (name && (parent === name || this.#descendants(name, all).includes(parent)))
      throw invalid(
        field,
        `group "${parent}" cannot be the parent of "${name}": it is the group itself or one of its subgroups`,
      );
    if (!all.some((g) => g.metadata.name === parent)) {
      await this.#members.groupOf(workspace, parent);
    }
  }

  /** The names of the group's subgroups at every depth, parents before children. */
  #descendants(name: string, all: readonly GroupObject[]): string[] {
    const found: string[] = [];
    const queue = [name];
    while (queue.length) {
      const parent = queue.shift() as string;
      for (const g of all)
        if (
          g.metadata.labels?.[this.#parentLabel] === parent &&
          !found.includes(g.metadata.name) &&
          g.metadata.name !== name
        ) {
          found.push(g.metadata.name);
          queue.push(g.metadata.name);
        }
    }
    return found;
  }

  async #read(caller: Identity, workspace: string, verb: 'list' | 'get', name?: string): Promise<void> {
    await this.#access.read(caller, workspace, {
      verb,
      group: this.#iamGroup,
      resource: 'groups',
      ...(name ? { name } : {}),
    });
    if (!this.#cache.ready)
      throw new ApiError('Unavailable', 'the group caches are starting', { retryAfterSeconds: 1 });
    if (!this.#cache.installed) throw notInstalled(this.#iamGroup, 'groups');
  }

  async #write(caller: Identity, workspace: string, verb: string): Promise<void> {
    await this.#access.write(caller, workspace, verb, 'groups');
    if (this.#cache.installed === false) throw notInstalled(this.#iamGroup, 'groups');
  }

  /** The workspace's groups, read fresh (a cache's lag would miss a group just made). */
  async #workspaceGroups(workspace: string): Promise<GroupObject[]> {
    const selector = encodeURIComponent(`${this.#workspaceLabel}=${workspace}`);
    return this.#kube.items<GroupObject>(`${this.#collection()}?labelSelector=${selector}`);
  }

  #collection(): string {
    return `/apis/${this.#iamGroup}/v1alpha2/groups`;
  }

  #item(name: string): string {
    return `${this.#collection()}/${encodeURIComponent(name)}`;
  }
}
