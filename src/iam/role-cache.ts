import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { Informer, kubeWatch, type ListResult } from '../cluster/informer.ts';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';
import type { IamGroup } from '../tokens/iam-resources.ts';
import type { BindingObject, RoleObject, RoleVocabulary } from './role-objects.ts';
import { bindingsOf, templatesOf } from './role-templates.ts';

/**
 * Where a member's role templates come from: `original` when the original's GlobalRole resources are
 * installed in the platform's IAM group (its role model is in use: GlobalRoles, WorkspaceRoles,
 * Kubernetes ClusterRoles and Roles carrying its annotations); `derived` when only our CRDs are, and
 * the templates are derived from what Kubernetes RBAC grants (derived-rules.ts).
 */
export type RoleModel = 'original' | 'derived';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const LIST_TIMEOUT_MS = 60_000;
const DISCOVERY_RETRY_MS = 2000;

type Cached<T> = Informer<T & { metadata: { name: string } }>;

/**
 * The original's role objects, in watch-backed caches started only when its role model is installed
 * (found once at start by API discovery, like the user schema: installing it later needs a restart).
 */
export class RoleCache {
  readonly #kc: KubeConfig;
  readonly #iam: IamGroup;
  readonly #words: RoleVocabulary;
  readonly #logger: Logger;
  readonly #metrics: CacheMetrics | undefined;
  #model: RoleModel | undefined;
  #informers: Informer<RoleObject | BindingObject>[] = [];
  #globalRoles: Cached<RoleObject> | undefined;
  #globalBindings: Cached<BindingObject> | undefined;
  #workspaceRoles: Cached<RoleObject> | undefined;
  #workspaceBindings: Cached<BindingObject> | undefined;
  #clusterRoles: Cached<RoleObject> | undefined;
  #clusterBindings: Cached<BindingObject> | undefined;
  #roles: Cached<RoleObject> | undefined;
  #roleBindings: Cached<BindingObject> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(deps: {
    kubeConfig: KubeConfig;
    iam: IamGroup;
    vocabulary: RoleVocabulary;
    logger: Logger;
    metrics?: CacheMetrics;
  }) {
    this.#kc = deps.kubeConfig;
    this.#iam = deps.iam;
    this.#words = deps.vocabulary;
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
  }

  /** Undefined until discovery has answered. */
  get model(): RoleModel | undefined {
    return this.#model;
  }

  /** The model is known and every cache it needs has its first list. */
  get ready(): boolean {
    return this.#model !== undefined && this.#informers.every((i) => i.synced);
  }

  start(): void {
    const attempt = (): void => {
      this.#discover().then(
        (resources) => {
          if (this.#stopped) return;
          this.#model =
            resources.has('globalroles') && resources.has('globalrolebindings') ? 'original' : 'derived';
          if (this.#model === 'original') this.#startCaches(resources);
          this.#logger.info('role model found', {
            model: this.#model,
            source:
              this.#model === 'original'
                ? `the original's GlobalRoles in ${this.#iam.group} and Kubernetes RBAC roles, cached`
                : `no GlobalRoles in ${this.#iam.group}: role templates derived from Kubernetes RBAC`,
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

  /** The user's GlobalRole (the original's: the role of the first GlobalRoleBinding naming the user). */
  globalRoleOf(username: string): RoleObject | undefined {
    const binding = bindingsOf(this.#globalBindings?.list() ?? [], username)[0];
    return binding ? this.#globalRoles?.get(binding.roleRef.name) : undefined;
  }

  globalTemplates(username: string): RoleObject[] {
    const role = this.globalRoleOf(username);
    return role ? this.#aggregate([role], (n) => this.#globalRoles?.get(n)) : [];
  }

  clusterTemplates(username: string): RoleObject[] {
    const binding = bindingsOf(this.#clusterBindings?.list() ?? [], username)[0];
    const role =
      binding && binding.roleRef.kind === 'ClusterRole'
        ? this.#clusterRoles?.get(binding.roleRef.name)
        : undefined;
    return role ? this.#aggregate([role], (n) => this.#clusterRoles?.get(n)) : [];
  }

  workspaceTemplates(username: string, groups: readonly string[], workspace: string): RoleObject[] {
    const inWorkspace = (this.#workspaceBindings?.list() ?? []).filter(
      (b) => b.metadata.labels?.[this.#words.workspaceLabel] === workspace,
    );
    const roles = bindingsOf(inWorkspace, username, groups).flatMap(
      (b) => this.#workspaceRoles?.get(b.roleRef.name) ?? [],
    );
    return this.#aggregate(roles, (n) => this.#workspaceRoles?.get(n));
  }

  namespaceTemplates(username: string, groups: readonly string[], namespace: string): RoleObject[] {
    const inNamespace = (this.#roleBindings?.list() ?? []).filter((b) => b.metadata.namespace === namespace);
    const roles = bindingsOf(inNamespace, username, groups).flatMap((b) =>
      b.roleRef.kind === 'Role' ? (this.#roles?.get(b.roleRef.name, namespace) ?? []) : [],
    );
    return this.#aggregate(roles, (n) => this.#roles?.get(n, namespace));
  }

  #aggregate(roles: RoleObject[], lookup: (name: string) => RoleObject | undefined): RoleObject[] {
    return templatesOf(roles, lookup, this.#words.aggregationRoles);
  }

  async #discover(): Promise<Set<string>> {
    try {
      const list = await kubeRequest<{ resources?: { name?: string }[] }>(
        this.#kc,
        `/apis/${this.#iam.group}/${this.#iam.version}`,
        { timeoutMs: 10_000 },
      );
      return new Set((list.resources ?? []).flatMap((r) => (r.name ? [r.name] : [])));
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 404) return new Set();
      throw err;
    }
  }

  #startCaches(resources: Set<string>): void {
    const iam = `/apis/${this.#iam.group}/${this.#iam.version}`;
    this.#globalRoles = this.#cache<RoleObject>(`${iam}/globalroles`, `globalroles.${this.#iam.group}`);
    this.#globalBindings = this.#cache<BindingObject>(
      `${iam}/globalrolebindings`,
      `globalrolebindings.${this.#iam.group}`,
    );
    if (resources.has('workspaceroles') && resources.has('workspacerolebindings')) {
      this.#workspaceRoles = this.#cache<RoleObject>(
        `${iam}/workspaceroles`,
        `workspaceroles.${this.#iam.group}`,
      );
      this.#workspaceBindings = this.#cache<BindingObject>(
        `${iam}/workspacerolebindings`,
        `workspacerolebindings.${this.#iam.group}`,
      );
    }
    this.#clusterRoles = this.#cache<RoleObject>(`${RBAC}/clusterroles`, 'clusterroles');
    this.#clusterBindings = this.#cache<BindingObject>(`${RBAC}/clusterrolebindings`, 'clusterrolebindings');
    this.#roles = this.#cache<RoleObject>(`${RBAC}/roles`, 'roles');
    this.#roleBindings = this.#cache<BindingObject>(`${RBAC}/rolebindings`, 'rolebindings');
    for (const informer of this.#informers) informer.start();
  }

  #cache<T extends RoleObject | BindingObject>(path: string, kind: string): Cached<T> {
    const informer = new Informer<T>({
      kind,
      // Raw JSON, not a typed client: the objects are served as the apiserver sent them.
      list: () => kubeRequest<ListResult<T>>(this.#kc, path, { timeoutMs: LIST_TIMEOUT_MS }),
      watch: kubeWatch(this.#kc, path),
      transform: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } }),
      logger: this.#logger,
      ...(this.#metrics ? { metrics: this.#metrics } : {}),
    });
    this.#informers.push(informer as unknown as Informer<RoleObject | BindingObject>);
    return informer;
  }
}
