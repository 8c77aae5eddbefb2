import type { KubeConfig } from '@kubernetes/client-node';
import { servedResources } from '../cluster/api-discovery.ts';
import { Informer, kubeWatch, type InformerEventType, type ListResult } from '../cluster/informer.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';
import type { Reconciler } from '../reconcile/one-replica.ts';
import type { ReconcileMetrics } from '../reconcile/reconcile-metrics.ts';
import { WorkQueue } from '../reconcile/work-queue.ts';
import {
  aggregatedNames,
  clusterRoleBindingFor,
  clusterRoleFor,
  generatedName,
  MANAGED_BY,
  rbacNames,
  roleBindingFor,
  rulesOf,
  same,
  sourceOf,
  unionOfRules,
  type RbacNames,
  type RbacObject,
  type SourceKind,
} from './rbac-translation.ts';
import { RbacWriter, statusOf } from './rbac-writer.ts';

export interface RbacSyncOptions {
  kubeConfig: KubeConfig;
  platformName: string;
  logger: Logger;
  metrics?: ReconcileMetrics;
  /** Bound on each request to the kube-apiserver. */
  timeoutMs: number;
  concurrency?: number;
  /** How often to look again for role kinds that were not installed (a CRD added later). */
  rediscoverMs?: number;
}

type Plural = 'globalroles' | 'globalrolebindings' | 'workspaceroles' | 'workspacerolebindings';
const PLURALS: readonly Plural[] = [
  'globalroles',
  'globalrolebindings',
  'workspaceroles',
  'workspacerolebindings',
];
const KIND_OF: Record<Plural, SourceKind> = {
  globalroles: 'GlobalRole',
  globalrolebindings: 'GlobalRoleBinding',
  workspaceroles: 'WorkspaceRole',
  workspacerolebindings: 'WorkspaceRoleBinding',
};
const RBAC_V1 = '/apis/rbac.authorization.k8s.io/v1';
const NAMESPACE = 'Namespace';

/**
 * Keeps Kubernetes RBAC in step with the platform's role model while this replica leads (see
 * `rbac-translation.ts` for what is made of what): it watches the GlobalRoles, GlobalRoleBindings,
 * WorkspaceRoles and WorkspaceRoleBindings that are installed, the namespaces, and the ClusterRoles,
 * ClusterRoleBindings and RoleBindings it generated (by label). The watches' first lists queue every
 * source and every generated object (the full pass that catches up: objects whose source is gone are
 * deleted, drift repaired); then each event queues what it touches. Keys are `<kind>/<name>`.
 *
 * It also recomputes role aggregation: a GlobalRole or WorkspaceRole annotated
 * `iam.<p>.io/aggregation-roles` gets the union of its templates' rules (roles of the same kind) when a
 * template changes, and so its generated ClusterRole follows.
 */
export class RbacSync implements Reconciler {
  readonly name = 'rbac';
  readonly #o: RbacSyncOptions;
  readonly #names: RbacNames;
  readonly #writer: RbacWriter;
  #term: Term | undefined;
  #opening: Promise<void> | undefined;
  #rediscover: NodeJS.Timeout | undefined;
  #generation = 0;

  constructor(options: RbacSyncOptions) {
    this.#o = options;
    this.#names = rbacNames(options.platformName);
    this.#writer = new RbacWriter(options.kubeConfig, options.timeoutMs);
  }

  start(): void {
    const generation = ++this.#generation;
    this.#opening = this.#open(generation);
  }

  async stop(): Promise<void> {
    this.#generation++;
    clearTimeout(this.#rediscover);
    await this.#opening;
    await this.#term?.close();
    this.#term = undefined;
  }

  async #open(generation: number): Promise<void> {
    const installed = await servedResources(
      this.#o.kubeConfig,
      `/apis/${this.#names.iamGroup}/v1alpha2`,
      this.#o.timeoutMs,
    ).then(
      (served) => new Set(PLURALS.filter((p) => served.has(p))),
      (err: unknown) => {
        this.#o.logger.warn('cannot find which role kinds are installed', { error: String(err) });
        return undefined;
      },
    );
    if (generation !== this.#generation) return;
    if (installed && !sameSet(installed, this.#term?.installed)) {
      await this.#term?.close();
      if (generation !== this.#generation) return;
      this.#term = new Term(this.#o, this.#names, this.#writer, installed);
      this.#o.logger.info('rbac reconciler watching', { installed: [...installed].sort() });
    }
    const every = this.#o.rediscoverMs ?? 30_000;
    this.#rediscover = setTimeout(
      () => {
        if (generation === this.#generation) this.#opening = this.#open(generation);
      },
      this.#term ? every : Math.min(every, 2000),
    );
  }
}

/** One set of watches and one queue, for the role kinds installed when it opened. */
class Term {
  readonly installed: ReadonlySet<Plural>;
  readonly #o: RbacSyncOptions;
  readonly #names: RbacNames;
  readonly #writer: RbacWriter;
  readonly #queue: WorkQueue;
  readonly #informers: Informer<RbacObject>[] = [];
  readonly #sources = new Map<Plural, Informer<RbacObject>>();
  readonly #namespaces: Informer<RbacObject>;
  readonly #clusterRoles: Informer<RbacObject>;
  readonly #clusterRoleBindings: Informer<RbacObject>;
  readonly #roleBindings: Informer<RbacObject>;
  /** Generated RoleBinding name → the namespaces holding one; namespace → the names there. */
  readonly #bindingNamespaces = new Index();
  readonly #namespaceBindings = new Index();
  /** Workspace → the names of its WorkspaceRoleBindings. */
  readonly #workspaceBindings = new Index();
  /** Workspace → its namespaces (by their label). */
  readonly #workspaceNamespaces = new Index();

  constructor(o: RbacSyncOptions, names: RbacNames, writer: RbacWriter, installed: Set<Plural>) {
    this.installed = installed;
    this.#o = o;
    this.#names = names;
    this.#writer = writer;
    const watch = (kind: string, path: string, labelSelector?: string) => {
      const informer = watched(o.kubeConfig, o.logger, kind, path, labelSelector);
      this.#informers.push(informer);
      return informer;
    };
    const generated = `${names.managedByLabel}=${MANAGED_BY},${names.sourceKindLabel}`;
    for (const plural of installed)
      this.#sources.set(plural, watch(`rbac-${plural}`, `/apis/${names.iamGroup}/v1alpha2/${plural}`));
    this.#namespaces = watch('rbac-namespaces', '/api/v1/namespaces');
    this.#clusterRoles = watch('rbac-clusterroles', `${RBAC_V1}/clusterroles`, generated);
    this.#clusterRoleBindings = watch(
      'rbac-clusterrolebindings',
      `${RBAC_V1}/clusterrolebindings`,
      generated,
    );
    this.#roleBindings = watch('rbac-rolebindings', `${RBAC_V1}/rolebindings`, generated);

    const queue = new WorkQueue({
      name: 'rbac',
      concurrency: o.concurrency ?? 8,
      logger: o.logger,
      ...(o.metrics ? { metrics: o.metrics } : {}),
      handle: (key) => this.#handle(key),
    });
    this.#queue = queue;
    const add = (kind: SourceKind | typeof NAMESPACE, name: string) => queue.add(`${kind}/${name}`);

    for (const [plural, informer] of this.#sources) {
      const kind = KIND_OF[plural];
      informer.onEvent((type, object, previous) => {
        if (kind === 'WorkspaceRoleBinding') {
          const ws = (b: RbacObject | undefined) => b?.metadata.labels?.[names.workspaceLabel];
          reindex(this.#workspaceBindings, type, ws(object), ws(previous), object.metadata.name);
        }
        add(kind, object.metadata.name);
        // A role template changed: the roles aggregating it follow.
        if (kind === 'GlobalRole' || kind === 'WorkspaceRole')
          for (const role of informer.values())
            if (aggregatedNames(names, role)?.includes(object.metadata.name)) add(kind, role.metadata.name);
      });
    }
    this.#namespaces.onEvent((type, ns, previous) => {
      const ws = (n: RbacObject | undefined) => n?.metadata.labels?.[names.workspaceLabel];
      reindex(this.#workspaceNamespaces, type, ws(ns), ws(previous), ns.metadata.name);
      add(NAMESPACE, ns.metadata.name);
    });
    const toSource = (_t: unknown, object: RbacObject) => {
      const source = sourceOf(names, object);
      if (source) add(source.kind, source.name);
    };
    this.#clusterRoles.onEvent(toSource);
    this.#clusterRoleBindings.onEvent(toSource);
    // A generated RoleBinding: its namespace is checked whole (what it should hold of every binding).
    this.#roleBindings.onEvent((type, b) => {
      const ns = b.metadata.namespace;
      if (!ns) return;
      if (type === 'DELETED') {
        this.#bindingNamespaces.remove(b.metadata.name, ns);
        this.#namespaceBindings.remove(ns, b.metadata.name);
      } else {
        this.#bindingNamespaces.add(b.metadata.name, ns);
        this.#namespaceBindings.add(ns, b.metadata.name);
      }
      add(NAMESPACE, ns);
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

  async #handle(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash);
    const name = key.slice(slash + 1);
    try {
      switch (kind) {
        case 'GlobalRole':
        case 'WorkspaceRole':
          return await this.#role(kind, name);
        case 'GlobalRoleBinding':
          return await this.#globalBinding(name);
        case 'WorkspaceRoleBinding':
          return await this.#workspaceBinding(name);
        case NAMESPACE:
          return await this.#namespace(name);
      }
    } catch (err) {
      // Invalid content (a role's rule Kubernetes does not take): retrying would not help.
      if (statusOf(err) !== 422) throw err;
      this.#o.logger.warn('cannot make the RBAC of a platform role or binding', { key, error: String(err) });
    }
  }

  #source(plural: Plural, name: string): RbacObject | undefined {
    const object = this.#sources.get(plural)?.get(name);
    return object?.metadata.deletionTimestamp ? undefined : object;
  }

  /** The generated ClusterRole of a role; the role's aggregated rules first, when its templates changed. */
  async #role(kind: 'GlobalRole' | 'WorkspaceRole', name: string): Promise<void> {
    const plural = kind === 'GlobalRole' ? 'globalroles' : 'workspaceroles';
    const role = this.#source(plural, name);
    const path = `${RBAC_V1}/clusterroles/${encodeURIComponent(generatedName(this.#names, kind, name))}`;
    if (!role) {
      await this.#deleteGenerated(this.#clusterRoles.get(generatedName(this.#names, kind, name)), path);
      return;
    }
    const templates = builtIn(this.#names, role) ? undefined : aggregatedNames(this.#names, role);
    if (templates) {
      const found = templates.flatMap((t) => this.#source(plural, t) ?? []);
      const rules = unionOfRules(found);
      // A template missing (deleted) is not a reason to empty the role: keep what it has.
      if (found.length === new Set(templates).size && !same(rulesOf(role), rules)) {
        // The role's own watch event brings the generated ClusterRole along.
        await this.#writer.replace(
          `/apis/${this.#names.iamGroup}/v1alpha2/${plural}/${encodeURIComponent(name)}`,
          {
            ...role,
            rules,
          },
        );
        return;
      }
    }
    await this.#writer.ensure(
      `${RBAC_V1}/clusterroles`,
      clusterRoleFor(this.#names, kind, role),
      this.#clusterRoles.get(generatedName(this.#names, kind, name)),
    );
  }

  async #globalBinding(name: string): Promise<void> {
    const binding = this.#source('globalrolebindings', name);
    const generated = generatedName(this.#names, 'GlobalRoleBinding', name);
    const current = this.#clusterRoleBindings.get(generated);
    if (!binding) {
      await this.#deleteGenerated(current, `${RBAC_V1}/clusterrolebindings/${encodeURIComponent(generated)}`);
      return;
    }
    await this.#writer.ensure(
      `${RBAC_V1}/clusterrolebindings`,
      clusterRoleBindingFor(this.#names, binding),
      current,
    );
  }

  /** A WorkspaceRoleBinding's RoleBinding in every namespace of its workspace, and in no other. */
  async #workspaceBinding(name: string): Promise<void> {
    const binding = this.#source('workspacerolebindings', name);
    const workspace = binding?.metadata.labels?.[this.#names.workspaceLabel];
    const generated = generatedName(this.#names, 'WorkspaceRoleBinding', name);
    const inWorkspace = new Set(workspace ? this.#namespacesOf(workspace) : []);
    const work: Promise<unknown>[] = [];
    for (const ns of inWorkspace)
      work.push(this.#ensureRoleBinding(roleBindingFor(this.#names, binding!, ns)));
    for (const ns of this.#bindingNamespaces.get(generated)) {
      if (inWorkspace.has(ns)) continue;
      work.push(this.#deleteGenerated(this.#roleBindings.get(generated, ns), roleBindingPath(ns, generated)));
    }
    await settleAll(work);
  }

  /** One namespace: the RoleBindings of its workspace's bindings, and none of another's. */
  async #namespace(name: string): Promise<void> {
    const ns = this.#namespaces.get(name);
    const workspace = ns?.metadata.deletionTimestamp
      ? undefined
      : ns?.metadata.labels?.[this.#names.workspaceLabel];
    const wanted = new Map<string, RbacObject>();
    if (workspace)
      for (const bindingName of this.#workspaceBindings.get(workspace)) {
        const binding = this.#source('workspacerolebindings', bindingName);
        if (binding?.metadata.labels?.[this.#names.workspaceLabel] !== workspace) continue;
        const desired = roleBindingFor(this.#names, binding, name);
        wanted.set(desired.metadata.name, desired);
      }
    const work: Promise<unknown>[] = [...wanted.values()].map((d) => this.#ensureRoleBinding(d));
    if (ns)
      for (const bindingName of this.#namespaceBindings.get(name)) {
        const existing = this.#roleBindings.get(bindingName, name);
        if (!existing || wanted.has(bindingName)) continue;
        if (sourceOf(this.#names, existing)?.kind !== 'WorkspaceRoleBinding') continue;
        work.push(this.#deleteGenerated(existing, roleBindingPath(name, existing.metadata.name)));
      }
    await settleAll(work);
  }

  async #ensureRoleBinding(desired: RbacObject): Promise<void> {
    const ns = desired.metadata.namespace!;
    try {
      await this.#writer.ensure(
        `${RBAC_V1}/namespaces/${encodeURIComponent(ns)}/rolebindings`,
        desired,
        this.#roleBindings.get(desired.metadata.name, ns),
      );
    } catch (err) {
      // A namespace being deleted takes no new objects: it goes with its bindings.
      if (statusOf(err) === 403 && this.#namespaces.get(ns)?.metadata.deletionTimestamp) return;
      if (statusOf(err) === 404 && !this.#namespaces.get(ns)) return;
      throw err;
    }
  }

  /** Deletes a generated object that is in the cache (so there is something to delete). */
  async #deleteGenerated(current: RbacObject | undefined, path: string): Promise<void> {
    if (!current || sourceOf(this.#names, current) === undefined) return;
    await this.#writer.delete(path);
  }

  #namespacesOf(workspace: string): string[] {
    return this.#workspaceNamespaces.get(workspace).filter((name) => {
      const ns = this.#namespaces.get(name);
      return (
        ns && !ns.metadata.deletionTimestamp && ns.metadata.labels?.[this.#names.workspaceLabel] === workspace
      );
    });
  }
}

/** Keeps `name` under its current key (a DELETED event carries the last object, no previous). */
function reindex(
  index: Index,
  type: InformerEventType,
  key: string | undefined,
  previousKey: string | undefined,
  name: string,
): void {
  if (previousKey) index.remove(previousKey, name);
  if (!key) return;
  if (type === 'DELETED') index.remove(key, name);
  else index.add(key, name);
}

/** Names grouped under a key (a small multimap). */
class Index {
  readonly #map = new Map<string, Set<string>>();

  add(key: string, value: string): void {
    let values = this.#map.get(key);
    if (!values) this.#map.set(key, (values = new Set()));
    values.add(value);
  }

  remove(key: string, value: string): void {
    const values = this.#map.get(key);
    if (!values) return;
    values.delete(value);
    if (values.size === 0) this.#map.delete(key);
  }

  get(key: string): string[] {
    return [...(this.#map.get(key) ?? [])];
  }
}

/**
 * A role whose rules are someone else's to set: the tenant reconciler's defaults (`<p>.io/managed-by`),
 * the original's built-in roles and templates. The role writes refuse to change them, and aggregation is
 * not recomputed for them (their rules and their annotation come from the same source).
 */
function builtIn(names: RbacNames, role: RbacObject): boolean {
  const labels = role.metadata.labels ?? {};
  return (
    names.managedByLabel in labels ||
    `${names.iamGroup}/role-template` in labels ||
    role.metadata.annotations?.[`${names.platform}.io/creator`] === 'system'
  );
}

function roleBindingPath(namespace: string, name: string): string {
  return `${RBAC_V1}/namespaces/${encodeURIComponent(namespace)}/rolebindings/${encodeURIComponent(name)}`;
}

/** Waits for every write; the first failure (after all have settled) fails the key, to be retried. */
async function settleAll(work: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(work);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** A watch-backed cache of one collection (optionally by label), without managedFields. */
function watched(
  kc: KubeConfig,
  logger: Logger,
  kind: string,
  path: string,
  labelSelector?: string,
): Informer<RbacObject> {
  const params: Record<string, string> = labelSelector ? { labelSelector } : {};
  const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : '';
  return new Informer<RbacObject>({
    kind,
    list: () => kubeRequest<ListResult<RbacObject>>(kc, path + query, { timeoutMs: 60_000 }),
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
