import {
  ApiException,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { BindingObject } from './role-objects.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

const codeOf = (err: unknown) => (err instanceof ApiException ? err.code : undefined);

/** Ignores a 404: the object is gone already, or (on a list) its kind is not installed. */
async function unless404<T>(call: Promise<T>, fallback: T): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (codeOf(err) === 404) return fallback;
    throw err;
  }
}

/**
 * The role bindings of one user as the original names and labels them (`iam.<platform>.io/user-ref`):
 * its GlobalRoleBinding `{user}-{role}`, and every binding of any kind that goes with the user when it is
 * deleted. Written with the server's own service account, after the caller was authorized.
 */
export class UserBindings {
  readonly #custom: CustomObjectsApi;
  readonly #rbac: RbacAuthorizationV1Api;
  readonly #group: string;
  readonly #userRef: string;

  constructor(deps: { kubeConfig: KubeConfig; iamGroup: string }) {
    this.#custom = deps.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#rbac = deps.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    this.#group = deps.iamGroup;
    this.#userRef = `${deps.iamGroup}/user-ref`;
  }

  #selector(username: string): string {
    return `${this.#userRef}=${username}`;
  }

  async #custom404List(plural: string, username: string): Promise<BindingObject[]> {
    const list = await unless404(
      this.#custom.listClusterCustomObject({
        group: this.#group,
        version: 'v1alpha2',
        plural,
        labelSelector: this.#selector(username),
      }) as Promise<{ items?: BindingObject[] }>,
      { items: [] },
    );
    return list.items ?? [];
  }

  /**
   * Binds the user to the GlobalRole `role` and unbinds any other, as the original does: one global
   * role per user, its binding named `{user}-{role}`.
   */
  async setGlobalRole(username: string, role: string): Promise<void> {
    const ref = { group: this.#group, version: 'v1alpha2', plural: 'globalrolebindings' };
    const name = `${username}-${role}`;
    for (const binding of await this.#custom404List('globalrolebindings', username)) {
      if (binding.metadata.name === name && binding.roleRef.name === role) continue;
      await unless404(this.#custom.deleteClusterCustomObject({ ...ref, name: binding.metadata.name }), {});
    }
    try {
      await this.#custom.createClusterCustomObject({
        ...ref,
        body: {
          apiVersion: `${this.#group}/v1alpha2`,
          kind: 'GlobalRoleBinding',
          metadata: { name, labels: { [this.#userRef]: username } },
          subjects: [{ kind: 'User', apiGroup: RBAC_GROUP, name: username }],
          roleRef: { apiGroup: this.#group, kind: 'GlobalRole', name: role },
        },
      });
    } catch (err) {
      if (codeOf(err) !== 409) throw err;
    }
  }

  /**
   * Deletes every binding labelled with the user: GlobalRoleBindings, WorkspaceRoleBindings and
   * GroupBindings (their group memberships; each where its CRD is installed), RoleBindings in every
   * namespace, ClusterRoleBindings. The number deleted.
   */
  async removeAll(username: string): Promise<number> {
    const labelSelector = this.#selector(username);
    let deleted = 0;
    for (const plural of ['globalrolebindings', 'workspacerolebindings', 'groupbindings']) {
      for (const binding of await this.#custom404List(plural, username)) {
        const ref = { group: this.#group, version: 'v1alpha2', plural, name: binding.metadata.name };
        await unless404(this.#custom.deleteClusterCustomObject(ref), {});
        deleted++;
      }
    }
    const roleBindings = await this.#rbac.listRoleBindingForAllNamespaces({ labelSelector });
    for (const binding of roleBindings.items) {
      const { name, namespace } = binding.metadata ?? {};
      if (!name || !namespace) continue;
      await unless404(this.#rbac.deleteNamespacedRoleBinding({ name, namespace }), {});
      deleted++;
    }
    const clusterBindings = await this.#rbac.listClusterRoleBinding({ labelSelector });
    for (const binding of clusterBindings.items) {
      const name = binding.metadata?.name;
      if (!name) continue;
      await unless404(this.#rbac.deleteClusterRoleBinding({ name }), {});
      deleted++;
    }
    return deleted;
  }
}
