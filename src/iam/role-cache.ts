import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { Informer, kubeWatch, type ListResult } from '../cluster/informer.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import { servedResources } from '../cluster/api-discovery.ts';
import type { Logger } from '../observability/logger.ts';
import type { IamGroup } from '../users/iam-resources.ts';
import type { Scope } from './derived-rules.ts';
import type { BindingObject, RoleObject, RoleVocabulary } from './role-objects.ts';
import { bindingsOf, templatesOf } from './role-templates.ts';
import { NamespaceIndex } from './namespace-index.ts';
import { SharedValues } from './shared-values.ts';

/**
 * Where a member's role templates come from: `original` when the original's GlobalRole resources are
 * installed in the platform's IAM group (its role model is in use: GlobalRoles, WorkspaceRoles,
 * Kubernetes ClusterRoles and Roles carrying its annotations); `derived` when only our CRDs are, and
 * the templates are derived from what Kubernetes RBAC grants (derived-rules.ts).
 */
export type RoleModel = 'original' | 'derived';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const RBAC = `/apis/${RBAC_GROUP}/v1`;
const LIST_TIMEOUT_MS = 60_000;
const DISCOVERY_RETRY_MS = 2000;
/** The fields of roles and bindings that many objects hold equal (the default roles of every project). */
const SHARED_FIELDS = ['rules', 'aggregationRule', 'roleRef', 'subjects'] as const;

/** The kind and apiVersion each cached role or binding is served with, whatever the list or watch gave. */
interface TypeOf {
  apiVersion: string;
  kind: string;
}

/** What the cache does with each of its informers, whatever it holds. */
type Running = Pick<Informer<object>, 'kind' | 'synced' | 'start' | 'stop' | 'onEvent' | 'resourceVersion'>;

interface Named {
  metadata: { name: string; resourceVersion?: string };
}

/**
 * The role model's objects in watch-backed caches: Kubernetes ClusterRoles, Roles and their bindings
 * always (they exist in every cluster); the original's GlobalRoles, WorkspaceRoles and their bindings
 * each where its resource is installed in the IAM group; and the names of namespaces and of workspaces
 * (WorkspaceTemplates, where installed in the tenant group), to tell an unknown scope from an empty
 * one. What is installed is found once at start by API discovery, like the user schema: installing a
 * resource later needs a restart.
 */
export class RoleCache {
  readonly #kc: KubeConfig;
  readonly #iam: IamGroup;
  readonly #tenantGroup: string;
  readonly #words: RoleVocabulary;
  readonly #logger: Logger;
  readonly #metrics: CacheMetrics | undefined;
  #model: RoleModel | undefined;
  #informers: Running[] = [];
  readonly #rbacListeners = new Set<() => void>();
  #globalRoles: Informer<RoleObject> | undefined;
  #globalBindings: Informer<BindingObject> | undefined;
  #workspaceRoles: Informer<RoleObject> | undefined;
  #workspaceBindings: Informer<BindingObject> | undefined;
  #clusterRoles: Informer<RoleObject> | undefined;
  #clusterBindings: Informer<BindingObject> | undefined;
  #roles: Informer<RoleObject> | undefined;
  #roleBindings: Informer<BindingObject> | undefined;
  #rolesByNamespace: NamespaceIndex<RoleObject> | undefined;
  #bindingsByNamespace: NamespaceIndex<BindingObject> | undefined;
  #namespaces: Informer<Named> | undefined;
  #workspaces: Informer<Named> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #values = new SharedValues();

  constructor(deps: {
    kubeConfig: KubeConfig;
    iam: IamGroup;
    /** `tenant.<platform>.io`, where the original's WorkspaceTemplates live. */
    tenantGroup: string;
    vocabulary: RoleVocabulary;
    logger: Logger;
    metrics?: CacheMetrics;
  }) {
    this.#kc = deps.kubeConfig;
    this.#iam = deps.iam;
    this.#tenantGroup = deps.tenantGroup;
    this.#words = deps.vocabulary;
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
  }

  /** Undefined until discovery has answered. */
  get model(): RoleModel | undefined {
    return this.#model;
  }

  /**
   * Changes whenever a cached role, binding or scope name does (the resourceVersions the caches are
   * current at): what a list built from them may be remembered under.
   */
  get stateTag(): string {
    let tag = this.#model ?? '';
    for (const informer of this.#informers) tag += `.${informer.resourceVersion}`;
    return tag;
  }

  /** The model is known and every cache has its first list. */
  get ready(): boolean {
    return this.#model !== undefined && this.#informers.every((i) => i.synced);
  }

  start(): void {
    const attempt = (): void => {
      Promise.all([
        servedResources(this.#kc, `/apis/${this.#iam.group}/${this.#iam.version}`),
        servedResources(this.#kc, `/apis/${this.#tenantGroup}/v1alpha2`),
      ]).then(
        ([iam, tenant]) => {
          if (this.#stopped) return;
          this.#model = iam.has('globalroles') && iam.has('globalrolebindings') ? 'original' : 'derived';
          this.#startCaches(iam, tenant);
          this.#logger.info('role model found', {
            model: this.#model,
            source:
              this.#model === 'original'
                ? `the original's GlobalRoles in ${this.#iam.group} and Kubernetes RBAC roles, cached`
                : `no GlobalRoles in ${this.#iam.group}: role templates derived from Kubernetes RBAC`,
            cached: this.#informers.map((i) => i.kind),
          });
        },
        (err: unknown) => {
          if (this.#stopped) return;
          this.#logger.warn('cannot read the role model yet, retrying', { error: String(err) });
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
    await Promise.all(this.#informers.map((i) => i.stop()));
  }

  /**
   * Every role of a scope's kind: GlobalRoles, ClusterRoles, WorkspaceRoles (of every workspace: which
   * belong to one is the caller's question, see role-lists.ts) or the Roles of one namespace. Empty
   * where the kind is not installed.
   */
  roles(scope: Scope, namespace = ''): RoleObject[] {
    if (scope === 'namespace') return this.#rolesByNamespace?.in(namespace) ?? [];
    return this.#rolesOf(scope)?.list() ?? [];
  }

  /** One role of a scope's kind by name (a Role in `namespace`). */
  role(scope: Scope, name: string, namespace = ''): RoleObject | undefined {
    if (scope === 'namespace') return this.#roles?.get(name, namespace);
    return this.#rolesOf(scope)?.get(name);
  }

  /**
   * Resolves true once `holds()` is true of the caches (asked now and after each of their events), or
   * false after `timeoutMs`: a write waits for its own effect to reach the caches before it answers, so
   * a list read right after the answer shows it.
   */
  until(holds: () => boolean, timeoutMs: number): Promise<boolean> {
    if (holds()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const unsubscribes: (() => void)[] = [];
      const finish = (held: boolean): void => {
        clearTimeout(timer);
        for (const unsubscribe of unsubscribes) unsubscribe();
        resolve(held);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      for (const informer of this.#informers)
        unsubscribes.push(informer.onEvent(() => holds() && finish(true)));
    });
  }

  /** Calls `listener` after each change of a cached role or binding (once synced); returns its removal. */
  onRbacChange(listener: () => void): () => void {
    this.#rbacListeners.add(listener);
    return () => this.#rbacListeners.delete(listener);
  }

  /**
   * The bindings of a scope: every GlobalRoleBinding or ClusterRoleBinding, the WorkspaceRoleBindings
   * labelled with the workspace, or the RoleBindings in the namespace. Not the ClusterRoleBindings and
   * RoleBindings the RBAC reconciler generated from the platform's bindings (their members are the
   * platform's and the workspace's, not the cluster's or the project's).
   */
  bindings(scope: Scope, place = ''): BindingObject[] {
    const own = (b: BindingObject) => b.metadata.labels?.[`${this.#iam.group}/generated-from`] === undefined;
    switch (scope) {
      case 'global':
        return this.#globalBindings?.list() ?? [];
      case 'cluster':
        return (this.#clusterBindings?.list() ?? []).filter(own);
      case 'workspace':
        return [...(this.#workspaceBindings?.values() ?? [])].filter(
          (b) => b.metadata.labels?.[this.#words.workspaceLabel] === place,
        );
      case 'namespace':
        return (this.#bindingsByNamespace?.in(place) ?? []).filter(own);
    }
  }

  namespaceExists(name: string): boolean {
    return this.#namespaces?.get(name) !== undefined;
  }

  /** A WorkspaceTemplate of that name exists (never, where that resource is not installed). */
  workspaceExists(name: string): boolean {
    return this.#workspaces?.get(name) !== undefined;
  }

  /** The user's GlobalRole (the original's: the role of the first GlobalRoleBinding naming the user). */
  globalRoleOf(username: string): RoleObject | undefined {
    const binding = bindingsOf(this.bindings('global'), username)[0];
    return binding ? this.#globalRoles?.get(binding.roleRef.name) : undefined;
  }

  globalTemplates(username: string): RoleObject[] {
    const role = this.globalRoleOf(username);
    return role ? this.#aggregate([role], (n) => this.#globalRoles?.get(n)) : [];
  }

  clusterTemplates(username: string): RoleObject[] {
    const binding = bindingsOf(this.bindings('cluster'), username)[0];
    const role =
      binding && binding.roleRef.kind === 'ClusterRole'
        ? this.#clusterRoles?.get(binding.roleRef.name)
        : undefined;
    return role ? this.#aggregate([role], (n) => this.#clusterRoles?.get(n)) : [];
  }

  workspaceTemplates(username: string, groups: readonly string[], workspace: string): RoleObject[] {
    const roles = bindingsOf(this.bindings('workspace', workspace), username, groups).flatMap(
      (b) => this.#workspaceRoles?.get(b.roleRef.name) ?? [],
    );
    return this.#aggregate(roles, (n) => this.#workspaceRoles?.get(n));
  }

  namespaceTemplates(username: string, groups: readonly string[], namespace: string): RoleObject[] {
    const roles = bindingsOf(this.bindings('namespace', namespace), username, groups).flatMap((b) =>
      b.roleRef.kind === 'Role' ? (this.#roles?.get(b.roleRef.name, namespace) ?? []) : [],
    );
    return this.#aggregate(roles, (n) => this.#roles?.get(n, namespace));
  }

  #rolesOf(scope: Exclude<Scope, 'namespace'>): Informer<RoleObject> | undefined {
    return scope === 'global'
      ? this.#globalRoles
      : scope === 'cluster'
        ? this.#clusterRoles
        : this.#workspaceRoles;
  }

  #aggregate(roles: RoleObject[], lookup: (name: string) => RoleObject | undefined): RoleObject[] {
    return templatesOf(roles, lookup, this.#words.aggregationRoles);
  }

  /** The resource names an API group version serves; empty when it is not installed. */

  #startCaches(iam: Set<string>, tenant: Set<string>): void {
    const iamPath = `/apis/${this.#iam.group}/${this.#iam.version}`;
    const iamType = (kind: string) => ({ apiVersion: `${this.#iam.group}/${this.#iam.version}`, kind });
    const rbacType = (kind: string) => ({ apiVersion: `${RBAC_GROUP}/v1`, kind });
    const fromIam = <T extends RoleObject | BindingObject>(plural: string, kind: string) =>
      iam.has(plural)
        ? this.#cache<T>(`${iamPath}/${plural}`, `${plural}.${this.#iam.group}`, iamType(kind))
        : undefined;
    this.#globalRoles = fromIam<RoleObject>('globalroles', 'GlobalRole');
    this.#globalBindings = fromIam<BindingObject>('globalrolebindings', 'GlobalRoleBinding');
    this.#workspaceRoles = fromIam<RoleObject>('workspaceroles', 'WorkspaceRole');
    this.#workspaceBindings = fromIam<BindingObject>('workspacerolebindings', 'WorkspaceRoleBinding');
    this.#clusterRoles = this.#cache(`${RBAC}/clusterroles`, 'clusterroles', rbacType('ClusterRole'));
    this.#clusterBindings = this.#cache(
      `${RBAC}/clusterrolebindings`,
      'clusterrolebindings',
      rbacType('ClusterRoleBinding'),
    );
    this.#roles = this.#cache(`${RBAC}/roles`, 'roles', rbacType('Role'));
    this.#roleBindings = this.#cache(`${RBAC}/rolebindings`, 'rolebindings', rbacType('RoleBinding'));
    this.#rolesByNamespace = new NamespaceIndex(this.#roles);
    this.#bindingsByNamespace = new NamespaceIndex(this.#roleBindings);
    this.#namespaces = this.#names('/api/v1/namespaces', 'namespaces (names)');
    if (tenant.has('workspacetemplates')) {
      this.#workspaces = this.#names(
        `/apis/${this.#tenantGroup}/v1alpha2/workspacetemplates`,
        `workspacetemplates.${this.#tenantGroup} (names)`,
      );
    }
    for (const informer of this.#informers) informer.start();
  }

  #cache<T extends RoleObject | BindingObject>(path: string, kind: string, type: TypeOf): Informer<T> {
    const informer = this.#informer<T>(path, kind, (o) => this.#shared({ ...o, ...type }));
    // Its first list is no change: what was granted before this server started is what reviews answer.
    informer.onEvent(() => {
      if (informer.synced) for (const listener of this.#rbacListeners) listener();
    });
    return informer;
  }

  /**
   * The object without managedFields, its parts that objects repeat (rules, role references, subjects,
   * labels, annotations) shared with every other cached object holding an equal one (shared-values.ts).
   */
  #shared<T extends RoleObject | BindingObject>(o: T): T {
    const pool = this.#values;
    const copy = { ...o } as T & Partial<Record<(typeof SHARED_FIELDS)[number], unknown>>;
    for (const field of SHARED_FIELDS) if (copy[field] !== undefined) copy[field] = pool.share(copy[field]);
    const { labels, annotations } = o.metadata;
    return {
      ...copy,
      metadata: {
        ...o.metadata,
        managedFields: undefined,
        ...(labels ? { labels: pool.share(labels) } : {}),
        ...(annotations ? { annotations: pool.share(annotations) } : {}),
      },
    };
  }

  /** Only names are kept: enough to tell whether the object exists, at a few bytes each. */
  #names(path: string, kind: string): Informer<Named> {
    return this.#informer<Named>(path, kind, (o) => ({
      metadata: {
        name: o.metadata.name,
        ...(o.metadata.resourceVersion ? { resourceVersion: o.metadata.resourceVersion } : {}),
      },
    }));
  }

  #informer<T extends Named>(path: string, kind: string, transform: (o: T) => T): Informer<T> {
    const informer = new Informer<T>({
      kind,
      // Raw JSON, not a typed client: the objects are served as the apiserver sent them.
      list: () => kubeRequest<ListResult<T>>(this.#kc, path, { timeoutMs: LIST_TIMEOUT_MS }),
      watch: kubeWatch(this.#kc, path),
      transform,
      logger: this.#logger,
      ...(this.#metrics ? { metrics: this.#metrics } : {}),
    });
    this.#informers.push(informer);
    return informer;
  }
}
