import { forbidden, type AccessReviewer, type ResourceAttributes } from '../access/access-review.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Identity } from '../kernel/identity.ts';
import type { IamKube } from './iam-kube.ts';
import type { BindingObject } from './role-objects.ts';
import { notFound, type WorkspaceVisibility } from './scope-access.ts';

/**
 * Who may read and write the groups of a workspace, their members (GroupBindings) and their role
 * bindings. Kubernetes has no workspace scope, so the RBAC questions are cluster-wide, asked through a
 * SubjectAccessReview as the caller:
 *
 * - reading: RBAC `list` (`get`) on the resource in its group, **or** seeing the workspace (the tenant
 *   module's rule: a member of it, or RBAC `get` on its WorkspaceTemplate), as for a workspace's members;
 * - writing: RBAC on the resource with the verb, **or** being bound to the workspace's admin role
 *   `{workspace}-admin` (as a user or through a group), as for a workspace's member writes.
 *
 * Authorization comes first (a caller without rights gets 403 whether the workspace exists or not);
 * then an unknown workspace is a 404 naming it.
 */
export class GroupAccess {
  readonly #reviewer: AccessReviewer;
  readonly #workspaces: WorkspaceVisibility;
  readonly #kube: IamKube;
  readonly #iamGroup: string;
  readonly #tenantGroup: string;
  readonly #workspaceLabel: string;

  constructor(deps: {
    reviewer: AccessReviewer;
    workspaces: WorkspaceVisibility;
    kube: IamKube;
    platformName: string;
  }) {
    this.#reviewer = deps.reviewer;
    this.#workspaces = deps.workspaces;
    this.#kube = deps.kube;
    this.#iamGroup = `iam.${deps.platformName}.io`;
    this.#tenantGroup = `tenant.${deps.platformName}.io`;
    this.#workspaceLabel = `${deps.platformName}.io/workspace`;
  }

  /** Resolves when the caller may read `resource` of the workspace; 403, or 404 for an unknown workspace. */
  async read(caller: Identity, workspace: string, attributes: ResourceAttributes): Promise<void> {
    if (await this.#allowed(caller, attributes)) {
      await this.workspaceExists(workspace);
      return;
    }
    try {
      await this.#workspaces.workspace(caller, 'workspacetemplates', workspace);
    } catch (err) {
      // Named as what RBAC would have allowed: seeing the workspace is the other way in.
      if (err instanceof ApiError && err.kind === 'Forbidden') throw forbidden(caller, attributes);
      throw err;
    }
  }

  /** Resolves when the caller may write: RBAC `verb` on the resource, or an admin of the workspace. */
  async write(caller: Identity, workspace: string, verb: string, resource: string): Promise<void> {
    const attributes: ResourceAttributes = { verb, group: this.#iamGroup, resource };
    if (!(await this.#allowed(caller, attributes)) && !(await this.#isAdmin(caller, workspace)))
      throw forbidden(caller, attributes);
    await this.workspaceExists(workspace);
  }

  async workspaceExists(workspace: string): Promise<void> {
    const path = `/apis/${this.#tenantGroup}/v1alpha2/workspacetemplates/${encodeURIComponent(workspace)}`;
    if (!(await this.#kube.get(path, 'reading the workspace')))
      throw notFound(this.#tenantGroup, 'workspacetemplates', workspace);
  }

  /** Bound to `{workspace}-admin` by a WorkspaceRoleBinding of the workspace, read fresh (an invite just made counts). */
  async #isAdmin(caller: Identity, workspace: string): Promise<boolean> {
    const selector = encodeURIComponent(`${this.#workspaceLabel}=${workspace}`);
    const bindings = await this.#kube.items<BindingObject>(
      `/apis/${this.#iamGroup}/v1alpha2/workspacerolebindings?labelSelector=${selector}`,
    );
    const admin = `${workspace}-admin`;
    return bindings.some(
      (b) =>
        b.roleRef.name === admin &&
        (b.subjects ?? []).some(
          (s) =>
            (s.kind === 'User' && s.name === caller.username) ||
            (s.kind === 'Group' && caller.groups.includes(s.name)),
        ),
    );
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
}
