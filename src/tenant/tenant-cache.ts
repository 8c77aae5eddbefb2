import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { Informer, kubeWatch, type ListResult } from '../cluster/informer.ts';
import { servedResources } from '../cluster/api-discovery.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';
import type { KubeObject } from './kube-object.ts';
import type { TenantNames, WorkspaceResource } from './tenant-store.ts';

const LIST_TIMEOUT_MS = 60_000;
const DISCOVERY_RETRY_MS = 2000;

interface Subject {
  kind?: string;
  name?: string;
}
type Binding = KubeObject & { subjects?: Subject[] };

/** What the tenant API reads: answered from memory. */
export interface TenantReads {
  listWorkspaces(resource: WorkspaceResource): KubeObject[];
  /** Changes whenever `listWorkspaces(resource)` may answer differently. */
  workspacesStateTag(resource: WorkspaceResource): string;
  getWorkspace(resource: WorkspaceResource, name: string): KubeObject | undefined;
  memberWorkspaces(username: string, groups: readonly string[]): Set<string>;
  workspaceNamespaces(workspace: string): KubeObject[];
  getNamespace(name: string): KubeObject | undefined;
}

/** The namespaces, as another module's watch-backed cache holds them. */
export interface NamespaceSource {
  get(name: string): KubeObject | undefined;
  list(): KubeObject[];
}

/**
 * The tenant objects in watch-backed caches: WorkspaceTemplates, Workspaces and WorkspaceRoleBindings,
 * each where its resource is installed (found once at start by API discovery; installing one later
 * needs a restart, as for the role model), and the namespaces from the resources API's cache. A
 * resource that is not installed reads as empty. Reads are as current as the watch (milliseconds
 * behind a write), as the original's informers are.
 */
export class TenantCache implements TenantReads {
  readonly #kc: KubeConfig;
  readonly #names: TenantNames;
  readonly #logger: Logger;
  readonly #metrics: CacheMetrics | undefined;
  readonly #namespaces: NamespaceSource;
  readonly #caches = new Map<
    'workspacetemplates' | 'workspaces' | 'workspacerolebindings',
    Informer<KubeObject>
  >();
  #discovered = false;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(deps: {
    kubeConfig: KubeConfig;
    names: TenantNames;
    namespaces: NamespaceSource;
    logger: Logger;
    metrics?: CacheMetrics;
  }) {
    this.#kc = deps.kubeConfig;
    this.#names = deps.names;
    this.#namespaces = deps.namespaces;
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
  }

  /** Discovery has answered and every cache it started has its first list. */
  get ready(): boolean {
    return this.#discovered && [...this.#caches.values()].every((c) => c.synced);
  }

  start(): void {
    const attempt = (): void => {
      this.#discover().then(
        (installed) => {
          if (this.#stopped) return;
          this.#discovered = true;
          for (const [resource, path] of installed) this.#caches.set(resource, this.#cache(resource, path));
          for (const cache of this.#caches.values()) cache.start();
          this.#logger.info('tenant caches', { resources: [...installed.keys()] });
        },
        (err: unknown) => {
          if (this.#stopped) return;
          this.#logger.warn('cannot discover the tenant resources yet, retrying', { error: String(err) });
          this.#timer = setTimeout(attempt, DISCOVERY_RETRY_MS);
          this.#timer.unref();
        },
      );
    };
    attempt();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all([...this.#caches.values()].map((c) => c.stop()));
  }

  listWorkspaces(resource: WorkspaceResource): KubeObject[] {
    return this.#caches.get(resource)?.list() ?? [];
  }

  workspacesStateTag(resource: WorkspaceResource): string {
    const cache = this.#caches.get(resource);
    return cache ? `${cache.synced ? 'synced' : 'listing'}.${cache.resourceVersion}` : 'not-installed';
  }

  getWorkspace(resource: WorkspaceResource, name: string): KubeObject | undefined {
    return this.#caches.get(resource)?.get(name);
  }

  /** Names of the workspaces whose WorkspaceRoleBindings name this user or one of these groups. */
  memberWorkspaces(username: string, groups: readonly string[]): Set<string> {
    const workspaces = new Set<string>();
    for (const binding of (this.#caches.get('workspacerolebindings')?.values() ?? []) as Iterable<Binding>) {
      const workspace = binding.metadata.labels?.[this.#names.workspaceLabel];
      if (!workspace || workspaces.has(workspace)) continue;
      const names = (binding.subjects ?? []).some(
        (s) =>
          (s.kind === 'User' && s.name === username) ||
          (s.kind === 'Group' && s.name !== undefined && groups.includes(s.name)),
      );
      if (names) workspaces.add(workspace);
    }
    return workspaces;
  }

  /** The namespaces labelled as belonging to a workspace. */
  workspaceNamespaces(workspace: string): KubeObject[] {
    return this.#namespaces
      .list()
      .filter((ns) => ns.metadata.labels?.[this.#names.workspaceLabel] === workspace);
  }

  getNamespace(name: string): KubeObject | undefined {
    return this.#namespaces.get(name);
  }

  /** The installed tenant resources and their collection paths. */
  async #discover(): Promise<Map<'workspacetemplates' | 'workspaces' | 'workspacerolebindings', string>> {
    const wanted = [
      { resource: 'workspacetemplates', groupVersion: `${this.#names.tenantGroup}/v1alpha2` },
      { resource: 'workspaces', groupVersion: `${this.#names.tenantGroup}/v1alpha1` },
      { resource: 'workspacerolebindings', groupVersion: `${this.#names.iamGroup}/v1alpha2` },
    ] as const;
    const found = new Map<'workspacetemplates' | 'workspaces' | 'workspacerolebindings', string>();
    for (const { resource, groupVersion } of wanted) {
      if ((await servedResources(this.#kc, `/apis/${groupVersion}`)).has(resource))
        found.set(resource, `/apis/${groupVersion}/${resource}`);
    }
    return found;
  }

  #cache(resource: string, path: string): Informer<KubeObject> {
    return new Informer<KubeObject>({
      kind: resource,
      // Raw JSON, not a typed client: the objects are served as the apiserver sent them.
      list: () => kubeRequest<ListResult<KubeObject>>(this.#kc, path, { timeoutMs: LIST_TIMEOUT_MS }),
      watch: kubeWatch(this.#kc, path),
      transform: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } }),
      logger: this.#logger,
      ...(this.#metrics ? { metrics: this.#metrics } : {}),
    });
  }
}
