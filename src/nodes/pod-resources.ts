import { milliValue, unitValue } from './quantity.ts';

/** The parts of a Pod (as the kube-apiserver sends it) that its resource footprint depends on. */
export interface RawPod {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; creationTimestamp?: string };
  spec?: {
    nodeName?: string;
    containers?: RawContainer[];
    initContainers?: RawContainer[];
    overhead?: ResourceList;
    /** Pod-level resources (KEP-2837). */
    resources?: Requirements;
    volumes?: RawVolume[];
  };
  status?: {
    phase?: string;
    startTime?: string;
    /** Deprecated by the PodResizePending condition (Kubernetes 1.33), still honoured. */
    resize?: string;
    conditions?: { type?: string; status?: string; reason?: string }[];
    containerStatuses?: RawContainerStatus[];
    initContainerStatuses?: RawContainerStatus[];
  };
}

/** What a pod's volume says of the claims it mounts. */
export interface RawVolume {
  name?: string;
  persistentVolumeClaim?: { claimName?: string };
  /** A generic ephemeral volume: its claim, `<pod>-<volume>`, is created for the pod. */
  ephemeral?: object;
}

type ResourceList = Readonly<Record<string, string>>;
interface Requirements {
  requests?: ResourceList;
  limits?: ResourceList;
}
interface RawContainer {
  name?: string;
  restartPolicy?: string;
  resources?: Requirements;
}
interface RawContainerStatus {
  name?: string;
  /** What the kubelet has actuated (in-place resize). */
  resources?: Requirements;
}

/** CPU in millicores and memory in bytes, for one side (requests or limits). Absent: not set. */
interface Amounts {
  cpu?: number;
  memory?: number;
}

/** What one pod adds to its node: the four sums the allocation annotations are made of. */
export interface PodFootprint {
  readonly cpuRequests: number;
  readonly cpuLimits: number;
  readonly memoryRequests: number;
  readonly memoryLimits: number;
}

const RESOURCES = ['cpu', 'memory'] as const;
type Resource = (typeof RESOURCES)[number];

function amountsOf(list: ResourceList | undefined): Amounts {
  const amounts: Amounts = {};
  if (!list) return amounts;
  if (list['cpu'] !== undefined) {
    const cpu = milliValue(list['cpu']);
    if (cpu !== undefined) amounts.cpu = cpu;
  }
  if (list['memory'] !== undefined) {
    const memory = unitValue(list['memory']);
    if (memory !== undefined) amounts.memory = memory;
  }
  return amounts;
}

/** `into += add`, per resource; a resource absent from both stays absent. */
function add(into: Amounts, addend: Amounts): void {
  for (const r of RESOURCES) if (addend[r] !== undefined) into[r] = (into[r] ?? 0) + addend[r];
}

/** `into = max(into, other)`, per resource. */
function max(into: Amounts, other: Amounts): void {
  for (const r of RESOURCES) {
    if (other[r] !== undefined && (into[r] === undefined || other[r] > into[r])) into[r] = other[r];
  }
}

function resizeInfeasible(pod: RawPod): boolean {
  if (pod.status?.resize === 'Infeasible') return true;
  return (pod.status?.conditions ?? []).some(
    (c) => c.type === 'PodResizePending' && c.status === 'True' && c.reason === 'Infeasible',
  );
}

/**
 * A container's amounts for one side. When the kubelet reports what it actuated (in-place resize),
 * the larger of desired and actual counts, or only the actual when the resize is infeasible — as
 * the scheduler does, so a shrinking pod keeps its room until the shrink has happened.
 */
function containerAmounts(
  side: keyof Requirements,
  container: RawContainer,
  status: RawContainerStatus | undefined,
  infeasible: boolean,
): Amounts {
  const desired = amountsOf(container.resources?.[side]);
  if (!status?.resources) return desired;
  const actual = amountsOf(status.resources[side]);
  if (infeasible) return actual;
  max(desired, actual);
  return desired;
}

/**
 * Kubernetes' per-pod rule (k8s.io/component-helpers resource.PodRequests / PodLimits), for one side:
 * the sum of the app containers and of the restartable (sidecar) init containers, or — if larger, per
 * resource — the peak while init containers run (each init container plus the sidecars started
 * before it); then pod-level resources replace the container aggregate where set; then the pod
 * overhead is added (to limits only where a limit exists).
 */
function podAmounts(pod: RawPod, side: keyof Requirements): Amounts {
  const infeasible = resizeInfeasible(pod);
  const statuses = new Map((pod.status?.containerStatuses ?? []).map((s) => [s.name, s]));
  const initStatuses = new Map((pod.status?.initContainerStatuses ?? []).map((s) => [s.name, s]));

  const total: Amounts = {};
  for (const container of pod.spec?.containers ?? []) {
    add(total, containerAmounts(side, container, statuses.get(container.name), infeasible));
  }
  const sidecars: Amounts = {};
  const initPeak: Amounts = {};
  for (const container of pod.spec?.initContainers ?? []) {
    if (container.restartPolicy === 'Always') {
      const amounts = containerAmounts(side, container, initStatuses.get(container.name), infeasible);
      add(total, amounts);
      add(sidecars, amounts);
      max(initPeak, sidecars);
    } else {
      const running: Amounts = amountsOf(container.resources?.[side]);
      add(running, sidecars);
      max(initPeak, running);
    }
  }
  max(total, initPeak);

  const podLevel = amountsOf(pod.spec?.resources?.[side]);
  for (const r of RESOURCES) if (podLevel[r] !== undefined) total[r] = podLevel[r];

  const overhead = amountsOf(pod.spec?.overhead);
  for (const r of RESOURCES) {
    if (overhead[r] === undefined) continue;
    if (side === 'requests' || total[r] !== undefined) total[r] = (total[r] ?? 0) + overhead[r];
  }
  return total;
}

/** Whether a pod occupies its node: bound, and neither Succeeded nor Failed. */
export function occupiesNode(pod: RawPod): boolean {
  const phase = pod.status?.phase;
  return !!pod.spec?.nodeName && phase !== 'Succeeded' && phase !== 'Failed';
}

/** What the pod adds to its node's allocation sums (a resource that is not set adds 0). */
export function podFootprint(pod: RawPod): PodFootprint {
  const requests = podAmounts(pod, 'requests');
  const limits = podAmounts(pod, 'limits');
  const of = (amounts: Amounts, r: Resource) => amounts[r] ?? 0;
  return {
    cpuRequests: of(requests, 'cpu'),
    cpuLimits: of(limits, 'cpu'),
    memoryRequests: of(requests, 'memory'),
    memoryLimits: of(limits, 'memory'),
  };
}
