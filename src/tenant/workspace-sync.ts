import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../observability/logger.ts';
import type { ClusterObject, ClusterWriter } from './cluster-writer.ts';
import { workspaceRoleDefaults, type RoleBase } from './default-roles.ts';
import { objectPath, type TenantPaths } from './tenant-paths.ts';
import { MANAGED_BY, type TenantNames } from './tenant-store.ts';

/** Read access to one watched kind (an Informer). */
export interface Cached<T> {
  get(name: string, namespace?: string): T | undefined;
  values(): IterableIterator<T>;
}

/** The watched kinds; a kind that is not installed has no cache. */
export interface TenantCaches {
  templates?: Cached<WorkspaceTemplate>;
  workspaces?: Cached<ClusterObject>;
  /** Only those this reconciler generated (by its label). */
  workspaceRoles?: Cached<ClusterObject>;
  workspaceRoleBindings?: Cached<ClusterObject>;
  roleBases?: Cached<RoleBase & ClusterObject>;
  namespaces: Cached<ClusterObject>;
  roles: Cached<ClusterObject>;
}

/** The WorkspaceTemplate fields the reconciler reads (`tenant.<p>.io/v1alpha2`). */
export interface WorkspaceTemplate extends ClusterObject {
  spec?: {
    template?: {
      metadata?: { labels?: Record<string, string> };
      spec?: { manager?: string; [field: string]: unknown };
    };
    [field: string]: unknown;
  };
}

interface Deps {
  writer: ClusterWriter;
  names: TenantNames;
  paths: TenantPaths;
  caches: TenantCaches;
  logger: Logger;
}

/**
 * One workspace in step with its WorkspaceTemplate, as the original's workspace template controller
 * keeps it on a single cluster: a Workspace of the same name whose labels and spec are the template's
 * `spec.template`, the default WorkspaceRoles, the manager bound as admin, and on deletion (our finalizer)
 * the workspace's Workspace, namespaces and roles deleted — or, with the orphan finalizer, the namespaces
 * kept without the workspace label. There is no garbage collector to rely on (the original lets it
 * delete what the Workspace owns): every deletion is explicit.
 */
export class WorkspaceSync {
  readonly #d: Deps;

  constructor(deps: Deps) {
    this.#d = deps;
  }

  async sync(name: string): Promise<void> {
    const { caches } = this.#d;
    await this.#releaseDeletedWorkspace(caches.workspaces?.get(name));
    const template = caches.templates?.get(name);
    if (!template || this.#d.writer.behind(objectPath(this.#d.paths.templates, name), template)) return;
    if (template.metadata.deletionTimestamp) return this.#finalize(template);
    await this.#addFinalizer(template);
    await Promise.all([this.#syncWorkspace(template), this.#syncRoles(name), this.#syncManager(template)]);
  }

  /** The original's own Workspace finalizer: nobody else removes it once its controller is gone. */
  async #releaseDeletedWorkspace(workspace: ClusterObject | undefined): Promise<void> {
    const { names, paths, writer } = this.#d;
    const finalizers = workspace?.metadata.finalizers ?? [];
    if (!workspace?.metadata.deletionTimestamp || !finalizers.includes(names.workspaceFinalizer)) return;
    const path = objectPath(paths.workspaces, workspace.metadata.name);
    if (writer.behind(path, workspace)) return;
    await writer.patchMetadata(path, workspace, {
      finalizers: finalizers.filter((f) => f !== names.workspaceFinalizer),
    });
  }

  async #addFinalizer(template: WorkspaceTemplate): Promise<void> {
    const { names, paths, writer } = this.#d;
    const finalizers = template.metadata.finalizers ?? [];
    if (finalizers.includes(names.templateFinalizer)) return;
    await writer.patchMetadata(objectPath(paths.templates, template.metadata.name), template, {
      finalizers: [...finalizers, names.templateFinalizer],
    });
  }

  async #syncWorkspace(template: WorkspaceTemplate): Promise<void> {
    const { caches, names, paths, writer } = this.#d;
    if (!caches.workspaces) return;
    const name = template.metadata.name;
    const labels = { ...template.spec?.template?.metadata?.labels, [names.managedByLabel]: MANAGED_BY };
    const spec = template.spec?.template?.spec ?? {};
    const current = caches.workspaces.get(name);
    // Being deleted (by hand): made again once it is gone (its deletion is an event).
    if (current?.metadata.deletionTimestamp) return;
    await writer.ensure<ClusterObject>({
      collection: paths.workspaces,
      desired: {
        apiVersion: `${names.tenantGroup}/v1alpha1`,
        kind: 'Workspace',
        metadata: { name, labels },
        spec,
      },
      current,
      update: (found) =>
        isDeepStrictEqual(found['spec'] ?? {}, spec) && isDeepStrictEqual(found.metadata.labels ?? {}, labels)
          ? undefined
          : { ...structuredClone(found), metadata: { ...structuredClone(found.metadata), labels }, spec },
    });
  }

  async #syncRoles(workspace: string): Promise<void> {
    const { caches, names, paths, writer } = this.#d;
    const workspaceRoles = caches.workspaceRoles;
    if (!workspaceRoles) return;
    const roles = workspaceRoleDefaults(caches.roleBases?.values() ?? [], names);
    await Promise.all(
      roles.map((role) => {
        const name = `${workspace}-${role.name}`;
        const labels = {
          ...role.labels,
          [names.workspaceLabel]: workspace,
          [names.managedByLabel]: MANAGED_BY,
        };
        return writer.ensure<ClusterObject>({
          collection: paths.workspaceRoles,
          desired: {
            apiVersion: `${names.iamGroup}/v1alpha2`,
            kind: 'WorkspaceRole',
            metadata: { name, labels, annotations: role.annotations },
            rules: role.rules,
          },
          current: workspaceRoles.get(name),
          update: (found) => withRole(found, labels, role.annotations, role.rules),
        });
      }),
    );
  }

  /** `{ws}-admin` binding the manager to the workspace's admin role, once the manager is a User. */
  async #syncManager(template: WorkspaceTemplate): Promise<void> {
    const { caches, names, paths, writer } = this.#d;
    const manager = template.spec?.template?.spec?.manager;
    if (!caches.workspaceRoleBindings || !manager) return;
    const workspace = template.metadata.name;
    const name = `${workspace}-admin`;
    const labels = {
      [names.workspaceLabel]: workspace,
      [names.userRefLabel]: manager,
      [names.managedByLabel]: MANAGED_BY,
    };
    const binding = {
      roleRef: { apiGroup: names.iamGroup, kind: 'WorkspaceRole', name },
      subjects: [{ name: manager, kind: 'User', apiGroup: 'rbac.authorization.k8s.io' }],
    };
    const current = caches.workspaceRoleBindings.get(name);
    const differs = (found: ClusterObject) =>
      !isDeepStrictEqual(found.metadata.labels ?? {}, labels) ||
      !isDeepStrictEqual(found['roleRef'], binding.roleRef) ||
      !isDeepStrictEqual(found['subjects'], binding.subjects);
    if (current && !differs(current)) return;
    // As the original: a manager who is not (or no longer) a User is not bound.
    const user = await writer.get(objectPath(paths.users, manager));
    if (!user || user.metadata.deletionTimestamp) return;
    await writer.ensure<ClusterObject>({
      collection: paths.workspaceRoleBindings,
      desired: {
        apiVersion: `${names.iamGroup}/v1alpha2`,
        kind: 'WorkspaceRoleBinding',
        metadata: { name, labels },
        ...binding,
      },
      current,
      update: (found) =>
        differs(found)
          ? {
              ...structuredClone(found),
              metadata: { ...structuredClone(found.metadata), labels },
              ...binding,
            }
          : undefined,
    });
  }

  async #finalize(template: WorkspaceTemplate): Promise<void> {
    const { logger, names, paths, writer } = this.#d;
    const finalizers = template.metadata.finalizers ?? [];
    const orphan = finalizers.includes(names.orphanFinalizer);
    if (!orphan && !finalizers.includes(names.templateFinalizer)) return;
    const workspace = template.metadata.name;
    const namespaces = await writer.list(paths.namespaces, `${names.workspaceLabel}=${workspace}`);
    if (orphan) await this.#orphan(workspace, namespaces);
    else await this.#deleteAll(workspace, namespaces);
    await writer.patchMetadata(objectPath(paths.templates, workspace), template, {
      finalizers: finalizers.filter((f) => f !== names.templateFinalizer && f !== names.orphanFinalizer),
    });
    logger.info('workspace deleted', { workspace, namespaces: namespaces.length, orphan });
  }

  /** The Workspace, its namespaces, roles and bindings (what the original's Workspace owns). */
  async #deleteAll(workspace: string, namespaces: ClusterObject[]): Promise<void> {
    const { caches, names, paths, writer } = this.#d;
    if (caches.workspaces) await writer.delete(objectPath(paths.workspaces, workspace));
    for (const ns of namespaces)
      if (!ns.metadata.deletionTimestamp) await writer.delete(objectPath(paths.namespaces, ns.metadata.name));
    const inWorkspace = `${names.workspaceLabel}=${workspace}`;
    for (const [present, collection] of [
      [caches.workspaceRoleBindings, paths.workspaceRoleBindings],
      [caches.workspaceRoles, paths.workspaceRoles],
    ] as const) {
      if (!present) continue;
      for (const object of await writer.list(collection, inWorkspace))
        await writer.delete(objectPath(collection, object.metadata.name));
    }
  }

  /**
   * The Workspace only: its namespaces leave the workspace (label and owner reference removed), its roles
   * and bindings lose their owner reference. That is what a garbage collector does for an orphaning
   * deletion; done here first, the Workspace is then deleted plainly, so no `orphan` finalizer waits
   * for a collector that may not run.
   */
  async #orphan(workspace: string, namespaces: ClusterObject[]): Promise<void> {
    const { caches, names, paths, writer } = this.#d;
    const ownedBy = (o: ClusterObject) =>
      (o.metadata.ownerReferences ?? []).filter(
        (r) => !(r.kind === 'Workspace' && r.apiVersion?.startsWith(`${names.tenantGroup}/`)),
      );
    for (const ns of namespaces) {
      const kept = ownedBy(ns);
      await writer.patchMetadata(objectPath(paths.namespaces, ns.metadata.name), ns, {
        labels: { [names.workspaceLabel]: null },
        ...(kept.length !== (ns.metadata.ownerReferences ?? []).length ? { ownerReferences: kept } : {}),
      });
    }
    const inWorkspace = `${names.workspaceLabel}=${workspace}`;
    for (const [present, collection] of [
      [caches.workspaceRoleBindings, paths.workspaceRoleBindings],
      [caches.workspaceRoles, paths.workspaceRoles],
    ] as const) {
      if (!present) continue;
      for (const object of await writer.list(collection, inWorkspace)) {
        const kept = ownedBy(object);
        if (kept.length !== (object.metadata.ownerReferences ?? []).length)
          await writer.patchMetadata(objectPath(collection, object.metadata.name), object, {
            ownerReferences: kept,
          });
      }
    }
    if (caches.workspaces) await writer.delete(objectPath(paths.workspaces, workspace));
  }
}

/** `found` with these labels, annotations and rules, or undefined when it has them already. */
export function withRole(
  found: ClusterObject,
  labels: Record<string, string>,
  annotations: Record<string, string>,
  rules: unknown[],
): ClusterObject | undefined {
  if (
    isDeepStrictEqual(found.metadata.labels ?? {}, labels) &&
    isDeepStrictEqual(found.metadata.annotations ?? {}, annotations) &&
    isDeepStrictEqual(found['rules'] ?? [], rules)
  )
    return undefined;
  return {
    ...structuredClone(found),
    metadata: { ...structuredClone(found.metadata), labels, annotations },
    rules,
  };
}
