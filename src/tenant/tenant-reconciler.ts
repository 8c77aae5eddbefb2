import type { KubeConfig } from '@kubernetes/client-node';
import { Informer, kubeWatch, type ListResult } from '../cluster/informer.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import { servedResources } from '../cluster/api-discovery.ts';
import type { Logger } from '../observability/logger.ts';
import type { Reconciler } from '../reconcile/one-replica.ts';
import type { ReconcileMetrics } from '../reconcile/reconcile-metrics.ts';
import { WorkQueue } from '../reconcile/work-queue.ts';
import { ClusterWriter, type ClusterObject } from './cluster-writer.ts';
import { NamespaceSync } from './namespace-sync.ts';
import { tenantPaths, type TenantPaths } from './tenant-paths.ts';
import { MANAGED_BY, type TenantNames } from './tenant-store.ts';
import type { RoleBase } from './default-roles.ts';
import { WorkspaceSync, type TenantCaches } from './workspace-sync.ts';

export interface TenantReconcilerOptions {
  kubeConfig: KubeConfig;
  names: TenantNames;
  logger: Logger;
  metrics?: ReconcileMetrics;
  /** Bound on each request to the kube-apiserver. */
  timeoutMs: number;
  /** Keys handled at once. */
  concurrency?: number;
  /** How often to look again for tenant resources that were not installed (a CRD added later). */
  rediscoverMs?: number;
}

/** The resources the reconciler may find installed, by the collection it watches. */
type Kind = 'templates' | 'workspaces' | 'workspaceRoles' | 'workspaceRoleBindings' | 'roleBases';

const TEMPLATE = 'workspace/';
const NAMESPACE = 'namespace/';

/**
 * Keeps workspaces and their namespaces in step (WorkspaceSync, NamespaceSync) while this replica
 * leads. Each term starts by finding which of the original's tenant resources are installed, then
 * watches them, the namespaces and the Roles it generated; the watches' first lists queue every
 * workspace and namespace (the full pass that catches up), then every change queues its workspace or
 * namespace. A resource installed later is picked up within `rediscoverMs`.
 */
export class TenantReconciler implements Reconciler {
  readonly name = 'tenant';
  readonly #o: TenantReconcilerOptions;
  readonly #paths: TenantPaths;
  readonly #writer: ClusterWriter;
  #term: Term | undefined;
  #opening: Promise<void> | undefined;
  #rediscover: NodeJS.Timeout | undefined;
  /** Counts starts and stops: work begun for an earlier one is dropped. */
  #generation = 0;

  constructor(options: TenantReconcilerOptions) {
    this.#o = options;
    this.#paths = tenantPaths(options.names);
    this.#writer = new ClusterWriter(options.kubeConfig, options.timeoutMs);
  }

  start(): void {
    const term = ++this.#generation;
    this.#opening = this.#open(term);
  }

  async stop(): Promise<void> {
    this.#generation++;
    clearTimeout(this.#rediscover);
    await this.#opening;
    await this.#term?.close();
    this.#term = undefined;
  }

  /**
   * Opens a term with what is installed now; looks again later, and reopens when that changed. Does
   * nothing once `generation` is over (stopped, or started again).
   */
  async #open(generation: number): Promise<void> {
    const installed = await this.#discover().catch((err: unknown) => {
      this.#o.logger.warn('cannot find which tenant resources are installed', { error: String(err) });
      return undefined;
    });
    if (generation !== this.#generation) return;
    if (installed && !sameSet(installed, this.#term?.installed)) {
      await this.#term?.close();
      if (generation !== this.#generation) return;
      this.#term = new Term(this.#o, this.#paths, this.#writer, installed);
      this.#o.logger.info('tenant reconciler watching', { installed: [...installed].sort() });
    }
    // Not watching yet (the kube-apiserver did not answer): try again soon.
    const every = this.#o.rediscoverMs ?? 30_000;
    this.#rediscover = setTimeout(
      () => {
        if (generation === this.#generation) this.#opening = this.#open(generation);
      },
      this.#term ? every : Math.min(every, 2000),
    );
  }

  async #discover(): Promise<Set<Kind>> {
    const { tenantGroup, iamGroup } = this.#o.names;
    const [tenantV2, tenantV1, iam] = await Promise.all(
      [`/apis/${tenantGroup}/v1alpha2`, `/apis/${tenantGroup}/v1alpha1`, `/apis/${iamGroup}/v1alpha2`].map(
        (path) => servedResources(this.#o.kubeConfig, path, this.#o.timeoutMs),
      ),
    );
    const found = new Set<Kind>();
    if (tenantV2!.has('workspacetemplates')) found.add('templates');
    if (tenantV1!.has('workspaces')) found.add('workspaces');
    if (iam!.has('workspaceroles')) found.add('workspaceRoles');
    if (iam!.has('workspacerolebindings')) found.add('workspaceRoleBindings');
    if (iam!.has('rolebases')) found.add('roleBases');
    return found;
  }
}

/** One set of watches and one queue, for what was installed when it opened. */
class Term {
  readonly installed: ReadonlySet<Kind>;
  readonly #queue: WorkQueue;
  readonly #informers: Informer<ClusterObject>[] = [];

  constructor(o: TenantReconcilerOptions, paths: TenantPaths, writer: ClusterWriter, installed: Set<Kind>) {
    this.installed = installed;
    const { names, logger } = o;
    const managed = `${names.managedByLabel}=${MANAGED_BY}`;
    const watch = (kind: string, path: string, labelSelector?: string) => {
      const informer = watched(o.kubeConfig, logger, kind, path, labelSelector);
      this.#informers.push(informer);
      return informer;
    };
    const has = (kind: Kind) => installed.has(kind);
    const namespacesCache = watch('tenant-namespaces', paths.namespaces);
    const roles = watch('tenant-roles', paths.allRoles, managed);
    const templates = has('templates') ? watch('workspacetemplates', paths.templates) : undefined;
    const workspacesCache = has('workspaces') ? watch('workspaces', paths.workspaces) : undefined;
    const workspaceRoles = has('workspaceRoles')
      ? watch('tenant-workspaceroles', paths.workspaceRoles, managed)
      : undefined;
    const workspaceRoleBindings = has('workspaceRoleBindings')
      ? watch('tenant-workspacerolebindings', paths.workspaceRoleBindings, managed)
      : undefined;
    const roleBases = has('roleBases') ? watch('rolebases', paths.roleBases) : undefined;
    const caches: TenantCaches = {
      namespaces: namespacesCache,
      roles,
      ...(templates ? { templates } : {}),
      ...(workspacesCache ? { workspaces: workspacesCache } : {}),
      ...(workspaceRoles ? { workspaceRoles } : {}),
      ...(workspaceRoleBindings ? { workspaceRoleBindings } : {}),
      ...(roleBases ? { roleBases: roleBases as Informer<RoleBase & ClusterObject> } : {}),
    };
    const deps = { writer, names, paths, caches, logger };
    const workspaceSync = new WorkspaceSync(deps);
    const namespaceSync = new NamespaceSync(deps);
    const queue = new WorkQueue({
      name: 'tenant',
      concurrency: o.concurrency ?? 8,
      logger,
      ...(o.metrics ? { metrics: o.metrics } : {}),
      handle: (key) =>
        key.startsWith(TEMPLATE)
          ? workspaceSync.sync(key.slice(TEMPLATE.length))
          : namespaceSync.sync(key.slice(NAMESPACE.length)),
    });
    this.#queue = queue;

    const workspace = (name: string | undefined) => name && queue.add(TEMPLATE + name);
    const namespace = (name: string | undefined) => name && queue.add(NAMESPACE + name);
    const inWorkspace = (object: ClusterObject) => workspace(object.metadata.labels?.[names.workspaceLabel]);
    namespacesCache.onEvent((_t, ns) => namespace(ns.metadata.name));
    roles.onEvent((_t, role) => namespace(role.metadata.namespace));
    templates?.onEvent((_t, t) => workspace(t.metadata.name));
    workspacesCache?.onEvent((_t, w) => workspace(w.metadata.name));
    workspaceRoles?.onEvent((_t, r) => inWorkspace(r));
    workspaceRoleBindings?.onEvent((_t, b) => inWorkspace(b));
    // Other defaults: every workspace and project again (their first list needs nothing: all are queued).
    roleBases?.onEvent(() => {
      if (!roleBases.synced) return;
      for (const t of templates?.values() ?? []) workspace(t.metadata.name);
      for (const ns of namespacesCache.values()) namespace(ns.metadata.name);
    });

    // Handle keys only once every cache holds its first list: a key never sees half a cluster.
    let unsynced = this.#informers.length;
    for (const informer of this.#informers) {
      informer.whenSynced(() => {
        if (--unsynced === 0) queue.start();
      });
      informer.start();
    }
  }

  async close(): Promise<void> {
    await this.#queue.stop();
    await Promise.all(this.#informers.map((i) => i.stop()));
  }
}

/** A watch-backed cache of one collection (optionally by label), without managedFields. */
function watched(
  kc: KubeConfig,
  logger: Logger,
  kind: string,
  path: string,
  labelSelector?: string,
): Informer<ClusterObject> {
  const params: Record<string, string> = labelSelector ? { labelSelector } : {};
  const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : '';
  return new Informer<ClusterObject>({
    kind,
    list: () => kubeRequest<ListResult<ClusterObject>>(kc, path + query, { timeoutMs: 60_000 }),
    watch: kubeWatch(kc, path, undefined, params),
    transform: (object) => {
      const { managedFields: _dropped, ...metadata } = object.metadata;
      return { ...object, metadata };
    },
    logger,
  });
}

function sameSet<T>(a: ReadonlySet<T>, b: ReadonlySet<T> | undefined): boolean {
  return b !== undefined && a.size === b.size && [...a].every((x) => b.has(x));
}
