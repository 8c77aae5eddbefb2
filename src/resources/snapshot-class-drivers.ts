import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import type { Freshness, Informer } from '../cluster/informer.ts';
import { slimInformer, slimKey, type SlimRecord } from '../cluster/slim-informer.ts';
import { servedResources } from '../cluster/api-discovery.ts';
import type { Logger } from '../observability/logger.ts';

/** The CSI snapshot API (external-snapshotter's CRDs), installed or not. */
export const SNAPSHOT_API = '/apis/snapshot.storage.k8s.io/v1';
const DISCOVERY_RETRY_MS = 2000;

interface RawSnapshotClass {
  metadata?: { name?: string; resourceVersion?: string };
  driver?: unknown;
}

/** What is kept of a VolumeSnapshotClass: the CSI driver whose volumes it can snapshot. */
interface DriverRecord extends SlimRecord {
  readonly driver: string;
}

/**
 * The CSI drivers some VolumeSnapshotClass names, for the claims' `allow-snapshot` annotation. The
 * snapshot API is found once at start by API discovery (installing it later needs a restart); without
 * it no claim allows snapshots, as in the original, and nothing is watched.
 */
export class SnapshotClassDrivers {
  readonly #kubeConfig: KubeConfig;
  readonly #logger: Logger;
  readonly #metrics: CacheMetrics | undefined;
  readonly #drivers = new Map<string, number>();
  #informer: Informer<DriverRecord> | undefined;
  /** Undefined until discovery has answered. */
  #installed: boolean | undefined;
  #tag = '';
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: { kubeConfig: KubeConfig; logger: Logger; metrics?: CacheMetrics }) {
    this.#kubeConfig = options.kubeConfig;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
  }

  /** Discovery has answered and, where the API is installed, the cache has its first list. */
  get ready(): boolean {
    return this.#installed === false || (this.#informer?.synced ?? false);
  }

  /** Changes whenever the set of drivers does. */
  get tag(): string {
    return this.#tag;
  }

  freshness(): Freshness {
    return this.#informer?.freshness() ?? { connected: true, staleSeconds: 0 };
  }

  /** Whether some VolumeSnapshotClass names this provisioner as its driver. */
  allows(provisioner: string | undefined): boolean {
    return provisioner !== undefined && provisioner !== '' && this.#drivers.has(provisioner);
  }

  start(): void {
    const attempt = (): void => {
      servedResources(this.#kubeConfig, SNAPSHOT_API)
        .then((served) => served.has('volumesnapshotclasses'))
        .then(
          (installed) => {
            if (this.#stopped) return;
            this.#installed = installed;
            this.#logger.info('volume snapshot classes', {
              source: installed
                ? `${SNAPSHOT_API}/volumesnapshotclasses, cached`
                : 'not installed: no claim allows snapshots',
            });
            if (installed) this.#startCache();
          },
          (err: unknown) => {
            if (this.#stopped) return;
            this.#logger.warn('cannot discover the volume snapshot API yet, retrying', {
              error: String(err),
            });
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
    await this.#informer?.stop();
  }

  #startCache(): void {
    const informer = slimInformer<RawSnapshotClass, DriverRecord>({
      kind: 'volumesnapshotclasses',
      path: `${SNAPSHOT_API}/volumesnapshotclasses`,
      kubeConfig: this.#kubeConfig,
      slim: (snapshotClass) => ({
        key: slimKey(snapshotClass.metadata),
        resourceVersion: snapshotClass.metadata?.resourceVersion ?? '',
        driver: typeof snapshotClass.driver === 'string' ? snapshotClass.driver : '',
      }),
      logger: this.#logger,
      ...(this.#metrics ? { metrics: this.#metrics } : {}),
    });
    informer.onEvent((type, record, previous) => {
      const before = type === 'DELETED' ? record.driver : previous?.driver;
      const after = type === 'DELETED' ? undefined : record.driver;
      if (before === after) return;
      if (before) this.#count(before, -1);
      if (after) this.#count(after, 1);
      this.#tag = informer.resourceVersion;
    });
    this.#informer = informer;
    informer.start();
  }

  #count(driver: string, sign: 1 | -1): void {
    const classes = (this.#drivers.get(driver) ?? 0) + sign;
    if (classes > 0) this.#drivers.set(driver, classes);
    else this.#drivers.delete(driver);
  }
}
