import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import { servedResources } from '../cluster/api-discovery.ts';
import { Informer, kubeWatch, type ListResult } from '../cluster/informer.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import type { Logger } from '../observability/logger.ts';
import type { RoleObject } from './role-objects.ts';

const LIST_TIMEOUT_MS = 60_000;
const DISCOVERY_RETRY_MS = 2000;

/** A group of users in a workspace (`groups.iam.<p>.io`, cluster-scoped), as the original stores it. */
export interface GroupObject {
  apiVersion?: string;
  kind?: string;
  metadata: RoleObject['metadata'] & { generateName?: string; uid?: string };
  spec?: unknown;
  status?: unknown;
}

/** A user's membership of a group (`groupbindings.iam.<p>.io`): `users` are members of `groupRef.name`. */
export interface GroupBindingObject {
  apiVersion?: string;
  kind?: string;
  metadata: RoleObject['metadata'] & { generateName?: string; uid?: string };
  groupRef?: { apiGroup?: string; kind?: string; name?: string };
  users?: string[];
}

/**
 * The original's Groups and GroupBindings in watch-backed caches, each where its resource is installed in
 * the IAM group (found once at start by API discovery, like the role caches: installing the CRDs later
 * needs a restart). Ready once discovery answered and every cache has its first list; a cluster without
 * the resources is ready at once, with nothing cached.
 */
export class GroupCache {
  readonly #kc: KubeConfig;
  readonly #iamGroup: string;
  readonly #logger: Logger;
  readonly #metrics: CacheMetrics | undefined;
  #groups: Informer<GroupObject> | undefined;
  #bindings: Informer<GroupBindingObject> | undefined;
  #discovered = false;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(deps: { kubeConfig: KubeConfig; iamGroup: string; logger: Logger; metrics?: CacheMetrics }) {
    this.#kc = deps.kubeConfig;
    this.#iamGroup = deps.iamGroup;
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
  }

  get ready(): boolean {
    return this.#discovered && (this.#groups?.synced ?? true) && (this.#bindings?.synced ?? true);
  }

  /** Whether Groups and GroupBindings are served (undefined until discovery answered). */
  get installed(): boolean | undefined {
    return this.#discovered ? this.#groups !== undefined && this.#bindings !== undefined : undefined;
  }

  groups(): GroupObject[] {
    return this.#groups?.list() ?? [];
  }

  group(name: string): GroupObject | undefined {
    return this.#groups?.get(name);
  }

  bindings(): GroupBindingObject[] {
    return this.#bindings?.list() ?? [];
  }

  start(): void {
    const attempt = (): void => {
      servedResources(this.#kc, `/apis/${this.#iamGroup}/v1alpha2`).then(
        (served) => {
          if (this.#stopped) return;
          const path = `/apis/${this.#iamGroup}/v1alpha2`;
          if (served.has('groups') && served.has('groupbindings')) {
            this.#groups = this.#informer<GroupObject>(`${path}/groups`, 'Group');
            this.#bindings = this.#informer<GroupBindingObject>(`${path}/groupbindings`, 'GroupBinding');
          }
          this.#discovered = true;
          this.#logger.info('groups found', {
            installed: this.installed,
            group: this.#iamGroup,
          });
        },
        (err: unknown) => {
          if (this.#stopped) return;
          this.#logger.warn('cannot discover the group resources yet, retrying', { error: String(err) });
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
    await Promise.all([this.#groups?.stop(), this.#bindings?.stop()]);
  }

  #informer<T extends GroupObject | GroupBindingObject>(path: string, kind: string): Informer<T> {
    const apiVersion = `${this.#iamGroup}/v1alpha2`;
    const informer = new Informer<T>({
      kind: `${kind.toLowerCase()}s.${this.#iamGroup}`,
      list: () => kubeRequest<ListResult<T>>(this.#kc, path, { timeoutMs: LIST_TIMEOUT_MS }),
      watch: kubeWatch(this.#kc, path),
      transform: (o) => ({ ...o, apiVersion, kind, metadata: { ...o.metadata, managedFields: undefined } }),
      logger: this.#logger,
      ...(this.#metrics ? { metrics: this.#metrics } : {}),
    });
    informer.start();
    return informer;
  }
}
