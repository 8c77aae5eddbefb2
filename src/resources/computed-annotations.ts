import type { Freshness } from '../cluster/informer.ts';
import type { ClaimUsage } from '../nodes/pod-cache.ts';
import type { KubeObject } from './kube-object.ts';
import type { SnapshotClassDrivers } from './snapshot-class-drivers.ts';
import type { StorageClassUsage } from './storage-class-usage.ts';

/** The annotation through which the kube-controller-manager names the provisioner of a claim's volume. */
const BETA_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** Its GA successor, read where the beta one is absent. */
const PROVISIONER = 'volume.kubernetes.io/storage-provisioner';

/** An annotation the resources API adds to a kind's objects, named `<platform>.io/<name>`. */
export interface ComputedAnnotation {
  name: string;
  description: string;
  /** What every value matches (JSON Schema `pattern`). */
  pattern: string;
}

/**
 * The annotations the original computes for its console on the kinds served here as the caller, by
 * kind (the nodes' allocation annotations are the nodes module's). docs/resources-api.md lists them.
 */
export const COMPUTED_ANNOTATIONS: Readonly<Record<string, readonly ComputedAnnotation[]>> = {
  storageclasses: [
    {
      name: 'pvc-count',
      description:
        'PersistentVolumeClaims of this class in the whole cluster (`spec.storageClassName` or the `volume.beta.kubernetes.io/storage-class` annotation), in decimal.',
      pattern: '^(0|[1-9]\\d*)$',
    },
  ],
  persistentvolumeclaims: [
    {
      name: 'in-use',
      description:
        '`true` when some pod of its namespace (in any phase) mounts the claim: names it in a `persistentVolumeClaim` volume, or the claim is one its generic ephemeral volume created; else `false`.',
      pattern: '^(true|false)$',
    },
    {
      name: 'allow-snapshot',
      description:
        '`true` when the provisioner the claim is annotated with (`volume.beta.kubernetes.io/storage-provisioner`, else `volume.kubernetes.io/storage-provisioner`) is the `driver` of some VolumeSnapshotClass (`snapshot.storage.k8s.io/v1`); else `false`, also where that API is not installed.',
      pattern: '^(true|false)$',
    },
  ],
};

/** Adds a kind's computed annotations to the objects served, from caches (never a request per call). */
export interface Annotator {
  /** Whether every cache it reads has its first list. */
  readonly ready: boolean;
  /** The least current of its caches. */
  freshness(): Freshness;
  /** Changes whenever an annotation it adds may have. */
  tag(): string;
  /** A copy of the object with the annotations (the cached or listed object is never changed). */
  annotate(object: KubeObject): KubeObject;
}

function withAnnotations(object: KubeObject, added: Record<string, string>): KubeObject {
  const metadata = object.metadata ?? {};
  return { ...object, metadata: { ...metadata, annotations: { ...metadata.annotations, ...added } } };
}

function leastCurrent(...all: Freshness[]): Freshness {
  return all.reduce((worst, f) =>
    !f.connected && (worst.connected || f.staleSeconds > worst.staleSeconds) ? f : worst,
  );
}

/** What the annotators read of the claim and snapshot class caches. */
export type ClassCounts = Pick<StorageClassUsage, 'synced' | 'tag' | 'freshness' | 'count'>;
export type SnapshotDrivers = Pick<SnapshotClassDrivers, 'ready' | 'tag' | 'freshness' | 'allows'>;

/** `<platform>.io/pvc-count` on StorageClasses. */
export function storageClassAnnotator(platformName: string, usage: ClassCounts): Annotator {
  const key = `${platformName}.io/pvc-count`;
  return {
    get ready() {
      return usage.synced;
    },
    freshness: () => usage.freshness(),
    tag: () => usage.tag,
    annotate: (sc) => withAnnotations(sc, { [key]: String(usage.count(sc.metadata?.name ?? '')) }),
  };
}

/** `<platform>.io/in-use` and `<platform>.io/allow-snapshot` on PersistentVolumeClaims. */
export function claimAnnotator(
  platformName: string,
  claims: ClaimUsage,
  drivers: SnapshotDrivers,
): Annotator {
  const inUse = `${platformName}.io/in-use`;
  const allowSnapshot = `${platformName}.io/allow-snapshot`;
  return {
    get ready() {
      return claims.synced && drivers.ready;
    },
    freshness: () => leastCurrent(claims.freshness(), drivers.freshness()),
    tag: () => `${claims.claimsTag}.${drivers.tag}`,
    annotate: (pvc) => {
      const annotations = pvc.metadata?.annotations;
      const provisioner = annotations?.[BETA_PROVISIONER] || annotations?.[PROVISIONER];
      return withAnnotations(pvc, {
        [inUse]: String(claims.inUse(pvc.metadata?.namespace ?? '', pvc.metadata?.name ?? '')),
        [allowSnapshot]: String(drivers.allows(provisioner)),
      });
    },
  };
}
