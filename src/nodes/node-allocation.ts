import { formatBytes, formatMilli } from './quantity.ts';

/** What the pods on one node request and are limited to: CPU in millicores, memory in bytes. */
export interface NodeAllocation {
  readonly cpuRequests: number;
  readonly cpuLimits: number;
  readonly memoryRequests: number;
  readonly memoryLimits: number;
}

export const NO_ALLOCATION: NodeAllocation = Object.freeze({
  cpuRequests: 0,
  cpuLimits: 0,
  memoryRequests: 0,
  memoryLimits: 0,
});

/** A node's allocatable CPU (millicores) and memory (bytes), the denominators of the fractions. */
export interface Allocatable {
  readonly cpu: number;
  readonly memory: number;
}

/** `node.<platformName>.io/`, the prefix of the allocation annotations. */
export function allocationPrefix(platformName: string): string {
  return `node.${platformName}.io/`;
}

/** The eight allocation annotation names under a prefix, in the order they are served. */
export function allocationKeys(prefix: string): string[] {
  return [
    'cpu-requests',
    'cpu-limits',
    'memory-requests',
    'memory-limits',
    'cpu-requests-fraction',
    'cpu-limits-fraction',
    'memory-requests-fraction',
    'memory-limits-fraction',
  ].map((key) => prefix + key);
}

/** `int(sum/allocatable*100)` then `%`, as the system we re-create computes it (float64, truncated). */
function fraction(sum: number, allocatable: number): string {
  return `${allocatable > 0 ? Math.trunc((sum / allocatable) * 100) : 0}%`;
}

/** The eight annotations (name → value) for a node's sums and allocatable resources. */
export function allocationAnnotations(
  prefix: string,
  sums: NodeAllocation,
  allocatable: Allocatable,
): [string, string][] {
  const [cpuReq, cpuLim, memReq, memLim, cpuReqF, cpuLimF, memReqF, memLimF] = allocationKeys(prefix) as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return [
    [cpuReq, formatMilli(sums.cpuRequests)],
    [cpuLim, formatMilli(sums.cpuLimits)],
    [memReq, formatBytes(sums.memoryRequests)],
    [memLim, formatBytes(sums.memoryLimits)],
    [cpuReqF, fraction(sums.cpuRequests, allocatable.cpu)],
    [cpuLimF, fraction(sums.cpuLimits, allocatable.cpu)],
    [memReqF, fraction(sums.memoryRequests, allocatable.memory)],
    [memLimF, fraction(sums.memoryLimits, allocatable.memory)],
  ];
}

/** The annotations as JSON object members (`"k":"v","k2":"v2"`), spliced into a node's bytes. */
export function allocationMembers(prefix: string, sums: NodeAllocation, allocatable: Allocatable): string {
  return allocationAnnotations(prefix, sums, allocatable)
    .map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`)
    .join(',');
}
