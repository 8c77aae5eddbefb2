import type { ResourceAttributes } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import { AUTHENTICATED_GROUP, type Identity } from '../kernel/identity.ts';
import type { KubeObject } from './kube-object.ts';
import type { TenantReads } from './tenant-cache.ts';
import type { TenantNames, WorkspaceResource } from './tenant-store.ts';

/** Kubernetes RBAC decisions (the access reviewer). */
export interface AccessChecker {
  check(identity: Identity, attributes: ResourceAttributes): Promise<{ allowed: boolean }>;
}

/**
 * What a caller may see of workspaces and their namespaces. The original lets a caller allowed to list
 * workspaces see them all, and anyone else the workspaces their WorkspaceRoleBindings name
 * (`pkg/models/tenant`). Here the first question goes to Kubernetes RBAC (list on the resource in the
 * tenant group), and a workspace is also visible to whom RBAC grants `get` on it by name — so a cluster
 * with only Kubernetes RBAC (no WorkspaceRoleBindings) can still give a user one workspace.
 */
export class WorkspaceAccess {
  readonly #store: TenantReads;
  readonly #access: AccessChecker;
  readonly #names: TenantNames;

  constructor(options: { store: TenantReads; access: AccessChecker; names: TenantNames }) {
    this.#store = options.store;
    this.#access = options.access;
    this.#names = options.names;
  }

  /** The workspaces of this resource type the caller may see. */
  async visibleWorkspaces(identity: Identity, resource: WorkspaceResource): Promise<KubeObject[]> {
    const all = this.#store.listWorkspaces(resource);
    if (all.length === 0 || (await this.mayListAll(identity, resource))) return all;
    const members = this.#store.memberWorkspaces(identity.username, identity.groups);
    const visible = await Promise.all(
      all.map(
        async (ws) =>
          members.has(ws.metadata.name) || (await this.#mayGet(identity, resource, ws.metadata.name)),
      ),
    );
    return all.filter((_, i) => visible[i]);
  }

  /** One workspace: 403 when the caller may not see it (whether or not it exists), 404 when it does not exist. */
  async workspace(identity: Identity, resource: WorkspaceResource, name: string): Promise<KubeObject> {
    const allowed =
      (await this.#mayGet(identity, resource, name)) ||
      this.#store.memberWorkspaces(identity.username, identity.groups).has(name);
    if (!allowed) throw forbidden(identity, 'get', this.#names.tenantGroup, resource, name);
    const found = this.#store.getWorkspace(resource, name);
    if (!found) throw notFound(this.#names.tenantGroup, resource, name);
    return found;
  }

  /**
   * The namespaces of a workspace the caller may see: all of them for whom RBAC lets list namespaces,
   * else those RBAC lets them get (a RoleBinding in the namespace is enough, as for the kube-apiserver).
   */
  async workspaceNamespaces(identity: Identity, workspace: string): Promise<KubeObject[]> {
    const namespaces = this.#store.workspaceNamespaces(workspace);
    if (namespaces.length === 0) return namespaces;
    const all = await this.#access.check(identity, { verb: 'list', group: '', resource: 'namespaces' });
    if (all.allowed) return namespaces;
    const visible = await Promise.all(
      namespaces.map((ns) => this.#mayGetNamespace(identity, ns.metadata.name)),
    );
    return namespaces.filter((_, i) => visible[i]);
  }

  /**
   * The namespaces of a workspace a member may see (the console's project list of one member): for the
   * member themself, or for a caller RBAC lets list all namespaces. The member is asked about as the
   * user alone, without the groups their session would carry.
   */
  async memberNamespaces(caller: Identity, workspace: string, member: string): Promise<KubeObject[]> {
    if (caller.username !== member) {
      const all = await this.#access.check(caller, { verb: 'list', group: '', resource: 'namespaces' });
      if (!all.allowed)
        throw new ApiError(
          'Forbidden',
          `the namespaces of member "${member}" are forbidden: User "${caller.username}" cannot list resource "namespaces" in API group "" at the cluster scope`,
          { details: { name: member, group: '', kind: 'namespaces' } },
        );
    }
    const identity =
      caller.username === member ? caller : { username: member, groups: [AUTHENTICATED_GROUP] };
    return this.workspaceNamespaces(identity, workspace);
  }

  /** One namespace of a workspace: 403 unless RBAC lets the caller get it, 404 unless it carries the workspace's label. */
  async workspaceNamespace(identity: Identity, workspace: string, namespace: string): Promise<KubeObject> {
    if (!(await this.#mayGetNamespace(identity, namespace)))
      throw forbidden(identity, 'get', '', 'namespaces', namespace);
    const found = this.#store.getNamespace(namespace);
    if (!found || found.metadata.labels?.[this.#names.workspaceLabel] !== workspace)
      throw notFound('', 'namespaces', namespace);
    return found;
  }

  /** Kubernetes RBAC lets the caller list every workspace of this resource type. */
  async mayListAll(identity: Identity, resource: WorkspaceResource): Promise<boolean> {
    return (await this.#access.check(identity, { verb: 'list', group: this.#names.tenantGroup, resource }))
      .allowed;
  }

  async #mayGet(identity: Identity, resource: WorkspaceResource, name: string): Promise<boolean> {
    return (
      await this.#access.check(identity, { verb: 'get', group: this.#names.tenantGroup, resource, name })
    ).allowed;
  }

  async #mayGetNamespace(identity: Identity, name: string): Promise<boolean> {
    const attributes = { verb: 'get', group: '', resource: 'namespaces', name, namespace: name };
    return (await this.#access.check(identity, attributes)).allowed;
  }
}

function qualified(group: string, resource: string): string {
  return group ? `${resource}.${group}` : resource;
}

/** The kube-apiserver's wording for a denied request. */
function forbidden(
  identity: Identity,
  verb: string,
  group: string,
  resource: string,
  name: string,
): ApiError {
  return new ApiError(
    'Forbidden',
    `${qualified(group, resource)} "${name}" is forbidden: User "${identity.username}" cannot ${verb} resource "${resource}" in API group "${group}" at the cluster scope`,
    { details: { name, group, kind: resource } },
  );
}

function notFound(group: string, resource: string, name: string): ApiError {
  return new ApiError('NotFound', `${qualified(group, resource)} "${name}" not found`, {
    details: { name, group, kind: resource },
  });
}
