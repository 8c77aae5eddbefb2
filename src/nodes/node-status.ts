/**
 * The `status` of a node as the node list filters it. Definitions (documented in docs/nodes-api.md):
 *
 * - `unschedulable`: `spec.unschedulable` is true (the node is cordoned), or the node carries the
 *   `node.kubernetes.io/unschedulable` taint. This wins over everything else.
 * - `warning`: not unschedulable, and at least one of
 *   - the `Ready` condition is missing, or its status is not `True` (`False` or `Unknown`);
 *   - a condition that reports trouble is present with a status other than `False`: `MemoryPressure`,
 *     `DiskPressure`, `PIDPressure`, `NetworkUnavailable`;
 *   - a legacy health condition is present with a status other than `True`: `ConfigOK`, `KubeletReady`;
 *   - the node carries a taint the node lifecycle controller sets for trouble:
 *     `node.kubernetes.io/not-ready`, `…/unreachable`, `…/memory-pressure`, `…/disk-pressure`,
 *     `…/pid-pressure`, `…/network-unavailable`, `…/out-of-service`.
 * - `running`: everything else.
 *
 * Differences from the system we re-create: it ignores taints, and a node without a Ready condition
 * (one that never reported) counts there as running; here it is a warning.
 */

export const NODE_STATUSES = ['running', 'warning', 'unschedulable'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

export interface NodeLike {
  spec?: { unschedulable?: boolean; taints?: readonly { key?: string }[] };
  status?: { conditions?: readonly { type?: string; status?: string }[] };
}

const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

/** Conditions that are healthy when False. */
const TROUBLE_CONDITIONS = new Set(['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable']);
/** Conditions that are healthy when True, apart from Ready (which must also be present). */
const LEGACY_HEALTH_CONDITIONS = new Set(['ConfigOK', 'KubeletReady']);

const TROUBLE_TAINTS = new Set([
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.kubernetes.io/memory-pressure',
  'node.kubernetes.io/disk-pressure',
  'node.kubernetes.io/pid-pressure',
  'node.kubernetes.io/network-unavailable',
  'node.kubernetes.io/out-of-service',
]);

export function nodeStatusOf(node: NodeLike): NodeStatus {
  const taints = node.spec?.taints ?? [];
  if (node.spec?.unschedulable === true || taints.some((t) => t.key === UNSCHEDULABLE_TAINT)) {
    return 'unschedulable';
  }
  let ready = false;
  for (const condition of node.status?.conditions ?? []) {
    const type = condition.type ?? '';
    if (type === 'Ready') {
      if (condition.status !== 'True') return 'warning';
      ready = true;
    } else if (TROUBLE_CONDITIONS.has(type)) {
      if (condition.status !== 'False') return 'warning';
    } else if (LEGACY_HEALTH_CONDITIONS.has(type)) {
      if (condition.status !== 'True') return 'warning';
    }
  }
  if (!ready) return 'warning';
  if (taints.some((t) => t.key !== undefined && TROUBLE_TAINTS.has(t.key))) return 'warning';
  return 'running';
}
