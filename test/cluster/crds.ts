import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { errorLine } from './error-line.ts';
import { waitFor } from './wait-for.ts';

/** Reads a CustomResourceDefinition as the kube-apiserver serves it now. */
export type ReadCrd = (name: string) => Promise<V1CustomResourceDefinition>;

/**
 * Why a CRD is not Established yet, or undefined when it is. A CRD just created may have no status
 * or `status.conditions: null` (on which `kubectl wait --for=condition=Established` fails instead of
 * waiting): both mean "not yet".
 */
export function notEstablishedBecause(crd: V1CustomResourceDefinition): string | undefined {
  const conditions = crd.status?.conditions;
  if (!conditions) return 'no status conditions yet';
  const established = conditions.find((c) => c.type === 'Established');
  if (!established) return 'no Established condition yet';
  if (established.status === 'True') return undefined;
  const why = [established.reason, established.message].filter(Boolean).join(': ');
  return `Established ${established.status}${why ? ` (${why})` : ''}`;
}

/**
 * Polls until every named CRD is Established. After the deadline it fails naming each CRD that is not
 * and why (its condition, or the last error reading it).
 */
export async function waitForCrdsEstablished(
  names: string[],
  read: ReadCrd,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<void> {
  const pending = new Map(names.map((name) => [name, 'not read yet']));
  const poll = async () => {
    for (const name of [...pending.keys()]) {
      const why = await Promise.resolve()
        .then(() => read(name))
        .then(notEstablishedBecause, (err: unknown) => `cannot read it: ${errorLine(err)}`);
      if (why === undefined) pending.delete(name);
      else pending.set(name, why);
    }
    return pending.size === 0 ? true : undefined;
  };
  await waitFor('CRDs Established', poll, options).catch(() => {
    const which = [...pending].map(([name, why]) => `${name}: ${why}`).join('; ');
    throw new Error(`not Established after ${options.timeoutMs} ms: ${which}`);
  });
}
