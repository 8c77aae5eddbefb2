import type { Logger } from '../observability/logger.ts';
import { statusOf, type ClusterObject, type ClusterWriter } from './cluster-writer.ts';
import { namespaceRoleDefaults } from './default-roles.ts';
import { objectPath, type TenantPaths } from './tenant-paths.ts';
import { MANAGED_BY, type TenantNames } from './tenant-store.ts';
import { withRole, type TenantCaches } from './workspace-sync.ts';

interface Deps {
  writer: ClusterWriter;
  names: TenantNames;
  paths: TenantPaths;
  caches: TenantCaches;
  logger: Logger;
}

/**
 * One namespace of a workspace (a project) in step, as the original's namespace controller keeps it:
 * the default Roles (`admin`, `operator`, `viewer`, or the cluster's RoleBases) — Kubernetes RBAC, so in
 * force — and, once, its creator (`<p>.io/creator`) bound as `admin`. The original's namespace finalizer
 * marks that the creator was bound: a creator removed from the project later stays removed. A namespace
 * being deleted gets that finalizer removed, as the original's controller does.
 */
export class NamespaceSync {
  readonly #d: Deps;

  constructor(deps: Deps) {
    this.#d = deps;
  }

  async sync(name: string): Promise<void> {
    const { caches, names } = this.#d;
    const namespace = caches.namespaces.get(name);
    if (!namespace || this.#d.writer.behind(objectPath(this.#d.paths.namespaces, name), namespace)) return;
    const finalizers = namespace.metadata.finalizers ?? [];
    if (namespace.metadata.deletionTimestamp) {
      if (finalizers.includes(names.namespaceFinalizer))
        await this.#patch(namespace, {
          finalizers: finalizers.filter((f) => f !== names.namespaceFinalizer),
        });
      return;
    }
    if (!namespace.metadata.labels?.[names.workspaceLabel]) return;
    const bound = finalizers.includes(names.namespaceFinalizer);
    // At once: a RoleBinding may name its Role before the Role exists (bind is checked by name).
    await Promise.all([this.#syncRoles(name), bound ? undefined : this.#bindCreator(namespace)]);
    if (!bound) {
      await this.#patch(namespace, {
        finalizers: [...finalizers, names.namespaceFinalizer],
        labels: { [names.namespaceLabel]: name },
      });
    }
  }

  #patch(namespace: ClusterObject, patch: Parameters<ClusterWriter['patchMetadata']>[2]): Promise<void> {
    const { paths, writer } = this.#d;
    return writer.patchMetadata(objectPath(paths.namespaces, namespace.metadata.name), namespace, patch);
  }

  async #syncRoles(namespace: string): Promise<void> {
    const { caches, names, paths, writer } = this.#d;
    const roles = namespaceRoleDefaults(caches.roleBases?.values() ?? [], names);
    await Promise.all(
      roles.map((role) => {
        const labels = { ...role.labels, [names.managedByLabel]: MANAGED_BY };
        return writer.ensure<ClusterObject>({
          collection: paths.roles(namespace),
          desired: {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'Role',
            metadata: { name: role.name, namespace, labels, annotations: role.annotations },
            rules: role.rules,
          },
          current: caches.roles.get(role.name, namespace),
          update: (found) => withRole(found, labels, role.annotations, role.rules),
        });
      }),
    );
  }

  /** `{creator}-admin`, made once; an existing binding of that name is left as it is. */
  async #bindCreator(namespace: ClusterObject): Promise<void> {
    const { logger, names, paths, writer } = this.#d;
    const creator = namespace.metadata.annotations?.[names.creatorAnnotation];
    if (!creator) return;
    // As the original: only a creator who is a User is bound.
    const user = await writer.get(objectPath(paths.users, creator));
    if (!user) return;
    const ns = namespace.metadata.name;
    try {
      await writer.ensure<ClusterObject>({
        collection: paths.roleBindings(ns),
        desired: {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: {
            name: `${creator}-admin`,
            namespace: ns,
            labels: { [names.userRefLabel]: creator, [names.managedByLabel]: MANAGED_BY },
          },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'admin' },
          subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: creator }],
        },
      });
    } catch (err) {
      // A name no RoleBinding can have: nothing to retry.
      if (statusOf(err) !== 422) throw err;
      logger.warn('cannot bind the creator of a namespace', { namespace: ns, creator, error: String(err) });
    }
  }
}
