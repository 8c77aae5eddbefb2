import type { RawPod } from './pod-resources.ts';

/**
 * The PersistentVolumeClaims (in its own namespace) a pod mounts: those its volumes name, and those its
 * generic ephemeral volumes have created for it (`<pod>-<volume>`). Undefined for a pod that mounts
 * none, as most do, so the pod cache keeps nothing for them.
 */
export function claimsOf(pod: RawPod): readonly string[] | undefined {
  let claims: string[] | undefined;
  for (const volume of pod.spec?.volumes ?? []) {
    const claim = volume.persistentVolumeClaim?.claimName
      ? volume.persistentVolumeClaim.claimName
      : volume.ephemeral && volume.name && pod.metadata?.name
        ? `${pod.metadata.name}-${volume.name}`
        : undefined;
    if (claim === undefined || claims?.includes(claim)) continue;
    (claims ??= []).push(claim);
  }
  return claims;
}

/** Whether two pods mount the same claims (in the same order, as one pod's versions list them). */
export function sameClaims(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  return a.every((claim, i) => claim === b[i]);
}
