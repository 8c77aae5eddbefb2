import { forbidden, type AccessReviewer, type ResourceAttributes } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import type { RoleCache } from './role-cache.ts';

/** A scope of the role model: the platform, the cluster, one workspace or one namespace. */
export type Place =
  | { scope: 'global' }
  | { scope: 'cluster' }
  | { scope: 'workspace'; workspace: string }
  | { scope: 'namespace'; namespace: string };

/** What is read of a scope: its roles, or its members (read from its role bindings). */
export type Reading = 'roles' | 'members';

/**
 * Whether a caller may see a workspace: the tenant module's answer (workspace-access.ts), which throws
 * a Forbidden ApiError when not, and a NotFound one when the workspace does not exist.
 */
export interface WorkspaceVisibility {
  workspace(identity: Identity, resource: 'workspacetemplates', name: string): Promise<unknown>;
}

const RBAC = 'rbac.authorization.k8s.io';

/**
 * Who may read the roles and the members of a scope, and whether the scope exists. The question is the
 * one the kube-apiserver would ask of a caller reading the same objects there, through Kubernetes RBAC
 * (a SubjectAccessReview as the caller):
 *
 * | scope | roles | members |
 * |---|---|---|
 * | global | `list` (one: `get`) `globalroles` in `iam.<p>.io` | — |
 * | cluster | `list` (one: `get`) `clusterroles` | `list` `clusterrolebindings` |
 * | workspace | `list` (one: `get`) `workspaceroles` in `iam.<p>.io`, or seeing the workspace | `list` `workspacerolebindings` in `iam.<p>.io`, or seeing the workspace |
 * | namespace | `list` (one: `get`) `roles` in the namespace | `list` `rolebindings` in the namespace |
 *
 * Reading one member is reading the bindings of the scope, so it asks `list` too. Kubernetes has no
 * workspace scope: the workspace questions are cluster-wide, and a caller RBAC does not allow still
 * reads the roles and members of a workspace it may see (a member of it, or RBAC `get` on its
 * WorkspaceTemplate: the tenant module's rule). Authorization comes first, so a caller without rights
 * cannot tell an unknown namespace or workspace (404) from a forbidden one (403).
 */
export class ScopeAccess {
  readonly #reviewer: AccessReviewer;
  readonly #workspaces: WorkspaceVisibility;
  readonly #cache: RoleCache;
  readonly #iamGroup: string;
  readonly #tenantGroup: string;

  constructor(deps: {
    reviewer: AccessReviewer;
    workspaces: WorkspaceVisibility;
    cache: RoleCache;
    iamGroup: string;
    tenantGroup: string;
  }) {
    this.#reviewer = deps.reviewer;
    this.#workspaces = deps.workspaces;
    this.#cache = deps.cache;
    this.#iamGroup = deps.iamGroup;
    this.#tenantGroup = deps.tenantGroup;
  }

  /** Resolves when the caller may read this (one role: `name`); throws 403, 404, or 503 while the caches start. */
  async authorize(caller: Identity, place: Place, reading: Reading, name?: string): Promise<void> {
    const attributes = this.#attributes(place, reading, name);
    if (place.scope !== 'workspace') {
      if (!(place.scope === 'namespace' && (await this.#allowedInEveryNamespace(caller, attributes))))
        await this.#reviewer.authorize(caller, attributes);
      this.#ready();
      if (place.scope === 'namespace' && !this.#cache.namespaceExists(place.namespace))
        throw notFound('', 'namespaces', place.namespace);
      return;
    }
    if (await this.#allowed(caller, attributes)) {
      this.#ready();
      if (!this.#cache.workspaceExists(place.workspace))
        throw notFound(this.#tenantGroup, 'workspacetemplates', place.workspace);
      return;
    }
    try {
      await this.#workspaces.workspace(caller, 'workspacetemplates', place.workspace);
    } catch (err) {
      // Named as what RBAC would have allowed: seeing the workspace is the other way in.
      if (err instanceof ApiError && err.kind === 'Forbidden') throw forbidden(caller, attributes);
      throw err;
    }
    this.#ready();
  }

  #attributes(place: Place, reading: Reading, name: string | undefined): ResourceAttributes {
    const one = reading === 'roles' && name !== undefined;
    const base = { verb: one ? 'get' : 'list', ...(one ? { name } : {}) };
    switch (place.scope) {
      case 'global':
        return { ...base, group: this.#iamGroup, resource: 'globalroles' };
      case 'cluster':
        return {
          ...base,
          group: RBAC,
          resource: reading === 'roles' ? 'clusterroles' : 'clusterrolebindings',
        };
      case 'workspace':
        return {
          ...base,
          group: this.#iamGroup,
          resource: reading === 'roles' ? 'workspaceroles' : 'workspacerolebindings',
        };
      case 'namespace':
        return {
          ...base,
          group: RBAC,
          resource: reading === 'roles' ? 'roles' : 'rolebindings',
          namespace: place.namespace,
        };
    }
  }

  /**
   * Whether RBAC allows this in all namespaces (a review without a namespace asks that): one cached
   * answer per caller then covers every project, where a review per namespace would be a round trip to
   * the kube-apiserver on each first visit. A caller it does not allow, or an error, falls back to the
   * namespace's own review.
   */
  async #allowedInEveryNamespace(caller: Identity, attributes: ResourceAttributes): Promise<boolean> {
    const { namespace: _one, ...everywhere } = attributes;
    try {
      return (await this.#reviewer.check(caller, everywhere)).allowed;
    } catch {
      return false;
    }
  }

  async #allowed(caller: Identity, attributes: ResourceAttributes): Promise<boolean> {
    try {
      return (await this.#reviewer.check(caller, attributes)).allowed;
    } catch {
      throw new ApiError('Unavailable', 'authorization check is temporarily unavailable', {
        retryAfterSeconds: 1,
      });
    }
  }

  #ready(): void {
    if (!this.#cache.ready) {
      throw new ApiError('Unavailable', 'the role caches are starting', { retryAfterSeconds: 1 });
    }
  }
}

export function notFound(group: string, resource: string, name: string): ApiError {
  return new ApiError('NotFound', `${group ? `${resource}.${group}` : resource} "${name}" not found`, {
    details: { name, ...(group ? { group } : {}), kind: resource },
  });
}
