import type { Identity } from '../kernel/identity.ts';
import { formatBytes, formatMilli, milliValue } from '../nodes/quantity.ts';
import type { CallerLister } from './caller-lister.ts';
import { field, list, text, type KubeObject } from './kube-object.ts';
import { BUILT_IN_KINDS, type ResourceKind } from './kinds.ts';
import { daemonSetStatus, legacyJobFailed, replicasStatus } from './workload-status.ts';

/**
 * The overview cards of the original's console (its v1alpha2 API), computed from the cluster as the
 * caller may read it: system components, a namespace's quota usage, its workloads that are not ready.
 */

function kindOf(resource: string): ResourceKind {
  const kind = BUILT_IN_KINDS.find((k) => k.resource === resource);
  if (!kind) throw new Error(`unknown kind ${resource}`);
  return kind;
}

const extra = (resource: string, kind: string, group: string, version: string): ResourceKind => ({
  resource,
  kind,
  group,
  version,
  namespaced: true,
  source: 'apiserver',
  why: '',
  filters: {},
});
const RESOURCE_QUOTAS = extra('resourcequotas', 'ResourceQuota', '', 'v1');

async function listAll(
  lister: CallerLister,
  identity: Identity,
  kind: ResourceKind,
  namespace: string | undefined,
): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  await lister.list(identity, kind, namespace, {}, (items) => objects.push(...items));
  return objects;
}

// ---------------------------------------------------------------------------------------------
// Components

/** Where the original looks for its components; with another platform name its own namespaces. */
export function systemNamespaces(platformName: string): string[] {
  return [
    `${platformName}-system`,
    `${platformName}-logging-system`,
    `${platformName}-monitoring-system`,
    'openpitrix-system',
    'kube-system',
    'istio-system',
    `${platformName}-devops-system`,
    'porter-system',
  ];
}

export interface ComponentStatus {
  name: string;
  namespace: string;
  selfLink: string;
  label: Record<string, string>;
  startedAt: string;
  totalBackends: number;
  healthyBackends: number;
}

/**
 * Each Service with a selector in the system namespaces, with the pods it selects and how many of them
 * run with all containers ready. On a bare control plane (no Services there) the list is empty.
 */
export async function components(
  lister: CallerLister,
  identity: Identity,
  platformName: string,
): Promise<ComponentStatus[]> {
  const result: ComponentStatus[] = [];
  for (const namespace of systemNamespaces(platformName)) {
    const services = await listAll(lister, identity, kindOf('services'), namespace);
    const withSelector = services.filter((s) => Object.keys(selectorOf(s)).length > 0);
    if (withSelector.length === 0) continue;
    const pods = await listAll(lister, identity, kindOf('pods'), namespace);
    for (const service of withSelector) {
      const selector = selectorOf(service);
      const selected = pods.filter((pod) =>
        Object.entries(selector).every(([k, v]) => pod.metadata?.labels?.[k] === v),
      );
      result.push({
        name: service.metadata?.name ?? '',
        namespace,
        selfLink: '',
        label: selector,
        startedAt: service.metadata?.creationTimestamp ?? '',
        totalBackends: selected.length,
        healthyBackends: selected.filter(healthy).length,
      });
    }
  }
  return result;
}

function selectorOf(service: KubeObject): Record<string, string> {
  const selector = field(service, 'spec', 'selector');
  if (!selector || typeof selector !== 'object') return {};
  return Object.fromEntries(
    Object.entries(selector as Record<string, unknown>).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

function healthy(pod: KubeObject): boolean {
  return (
    field(pod, 'status', 'phase') === 'Running' &&
    list(field(pod, 'status', 'containerStatuses')).every((c) => field(c, 'ready') === true)
  );
}

// ---------------------------------------------------------------------------------------------
// Quotas

/** The object counts the original adds to a namespace's usage when no ResourceQuota tracks them. */
const COUNTED: readonly [string, string][] = [
  ['count/pods', 'pods'],
  ['count/daemonsets.apps', 'daemonsets'],
  ['count/deployments.apps', 'deployments'],
  ['count/ingresses.extensions', 'ingresses'],
  ['count/services', 'services'],
  ['count/statefulsets.apps', 'statefulsets'],
  ['persistentvolumeclaims', 'persistentvolumeclaims'],
  ['count/jobs.batch', 'jobs'],
  ['count/cronjobs.batch', 'cronjobs'],
];

export interface NamespaceQuota {
  namespace: string;
  data: { hard?: Record<string, string>; used: Record<string, string>; left?: Record<string, string> };
}

/** Keeps the smaller of two quantities per resource, as the original merges several ResourceQuotas. */
function mergeSmaller(into: Record<string, string>, from: unknown): void {
  if (!from || typeof from !== 'object') return;
  for (const [name, value] of Object.entries(from as Record<string, unknown>)) {
    if (typeof value !== 'string') continue;
    const current = into[name];
    if (current === undefined || (milliValue(value) ?? Infinity) < (milliValue(current) ?? Infinity)) {
      into[name] = value;
    }
  }
}

/** `hard - used`, never below zero, in the hard limit's style (binary suffix for byte amounts). */
function left(hard: string, used: string): string | undefined {
  const h = milliValue(hard);
  const u = milliValue(used);
  if (h === undefined || u === undefined) return undefined;
  const milli = Math.max(0, h - u);
  if (/i$/.test(hard) && milli % 1000 === 0) return formatBytes(milli / 1000);
  return formatMilli(milli);
}

/**
 * The namespace's ResourceQuota status (hard and used, the smallest where several quotas name a
 * resource), what is left of each limit, and object counts for the common kinds the quotas do not track.
 */
export async function namespaceQuota(
  lister: CallerLister,
  identity: Identity,
  namespace: string,
): Promise<NamespaceQuota> {
  const quotas = await listAll(lister, identity, RESOURCE_QUOTAS, namespace);
  const hard: Record<string, string> = {};
  const used: Record<string, string> = {};
  for (const quota of quotas) {
    mergeSmaller(hard, field(quota, 'status', 'hard'));
    mergeSmaller(used, field(quota, 'status', 'used'));
  }
  const remaining: Record<string, string> = {};
  for (const [name, limit] of Object.entries(hard)) {
    const usage = used[name];
    if (usage === undefined) continue;
    const value = left(limit, usage);
    if (value !== undefined) remaining[name] = value;
  }
  for (const [name, resource] of COUNTED) {
    if (used[name] !== undefined) continue;
    used[name] = String(await lister.count(identity, kindOf(resource), namespace));
  }
  const data: NamespaceQuota['data'] = { used };
  if (Object.keys(hard).length > 0) data.hard = hard;
  if (Object.keys(remaining).length > 0) data.left = remaining;
  return { namespace, data };
}

// ---------------------------------------------------------------------------------------------
// Abnormal workloads

export interface AbnormalWorkloads {
  namespace: string;
  data: Record<string, number>;
}

/** What counts as not ready, per kind, by the original's rules for this card. */
const NOT_READY: readonly [string, (o: KubeObject) => boolean][] = [
  // The card's older rule compares a Deployment's ready replicas with `spec.replicas`, as for StatefulSets.
  ['deployments', (o) => replicasStatus(o) === 'updating'],
  ['statefulsets', (o) => replicasStatus(o) === 'updating'],
  ['daemonsets', (o) => daemonSetStatus(o) === 'updating'],
  ['jobs', legacyJobFailed],
  [
    'persistentvolumeclaims',
    (o) => ['Pending', 'Lost'].includes(text(field(o, 'status', 'phase')) ?? 'Pending'),
  ],
];

/** Counts of the namespace's workloads that are not ready: `{namespace, data: {deployments: n, …}}`. */
export async function abnormalWorkloads(
  lister: CallerLister,
  identity: Identity,
  namespace: string,
): Promise<AbnormalWorkloads> {
  const data: Record<string, number> = {};
  for (const [resource, notReady] of NOT_READY) {
    const objects = await listAll(lister, identity, kindOf(resource), namespace);
    data[resource] = objects.filter(notReady).length;
  }
  return { namespace, data };
}
