import type { KubeConfig } from '@kubernetes/client-node';
import type { CacheMetrics } from '../cluster/cache-metrics.ts';
import type { Freshness, Informer } from '../cluster/informer.ts';
import { slimInformer, slimKey, type SlimRecord } from '../cluster/slim-informer.ts';
import type { Logger } from '../observability/logger.ts';
import type { KubeObject } from './kube-object.ts';

/** The storage class a claim names in the annotation that preceded `spec.storageClassName`. */
const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

/** What is kept of a PersistentVolumeClaim: the storage classes it counts towards. */
interface ClaimRecord extends SlimRecord {
  readonly classes: readonly string[];
}

/**
 * The classes a claim counts towards, as the original counts them: the one `spec.storageClassName`
 * names and the one the beta annotation names (the same class once).
 */
export function storageClassesOf(claim: KubeObject): readonly string[] {
  const named = (claim.spec as { storageClassName?: unknown } | undefined)?.storageClassName;
  const annotated = claim.metadata?.annotations?.[BETA_STORAGE_CLASS];
  const classes: string[] = [];
  if (typeof named === 'string' && named !== '') classes.push(named);
  if (typeof annotated === 'string' && annotated !== '' && annotated !== named) classes.push(annotated);
  return classes;
}

/**
 * How many PersistentVolumeClaims each StorageClass has (the `pvc-count` annotation), kept by a watch of
 * every claim with the server's own identity; per claim only its key, version and classes are kept.
 */
export class StorageClassUsage {
  readonly informer: Informer<ClaimRecord>;
  readonly #counts = new Map<string, number>();
  #tag = '';

  constructor(options: { kubeConfig: KubeConfig; logger: Logger; metrics?: CacheMetrics }) {
    this.informer = slimInformer<KubeObject, ClaimRecord>({
      kind: 'persistentvolumeclaims',
      path: '/api/v1/persistentvolumeclaims',
      kubeConfig: options.kubeConfig,
      slim: (claim) => ({
        key: slimKey(claim.metadata),
        resourceVersion: claim.metadata?.resourceVersion ?? '',
        classes: storageClassesOf(claim),
      }),
      logger: options.logger,
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });
    this.informer.onEvent((type, claim, previous) => {
      const before = type === 'DELETED' ? claim.classes : (previous?.classes ?? []);
      const after = type === 'DELETED' ? [] : claim.classes;
      if (before.length === after.length && before.every((c, i) => c === after[i])) return;
      for (const name of before) this.#count(name, -1);
      for (const name of after) this.#count(name, 1);
      this.#tag = this.informer.resourceVersion;
    });
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  /** Changes whenever some class's count does. */
  get tag(): string {
    return this.#tag;
  }

  freshness(): Freshness {
    return this.informer.freshness();
  }

  /** Claims of the class (0 for a class no claim names). */
  count(storageClass: string): number {
    return this.#counts.get(storageClass) ?? 0;
  }

  start(): void {
    this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  #count(storageClass: string, sign: 1 | -1): void {
    const claims = (this.#counts.get(storageClass) ?? 0) + sign;
    if (claims > 0) this.#counts.set(storageClass, claims);
    else this.#counts.delete(storageClass);
  }
}
