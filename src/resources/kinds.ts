import type { SortBy } from '../list-query/list-query.ts';
import { creationMs, field, list, text, timeMs, type KubeObject } from './kube-object.ts';
import {
  daemonSetStatus,
  deploymentStatus,
  JOB_STATUSES,
  jobStatus,
  POD_STATUSES,
  podStatus,
  statefulSetStatus,
  WORKLOAD_STATUSES,
} from './workload-status.ts';

/**
 * The kinds served under `/kapis/resources.<platform>.io/v1alpha3`, each once: where it lives in the
 * Kubernetes API, how it is served, and the filters and sort keys it has beyond the common ones.
 * docs/resources-api.md explains the choice of source per kind.
 */

/**
 * `watch-cache`: kept in memory by a watch (read by the console's busiest pages).
 * `apiserver`: listed from the kube-apiserver as the caller, with selectors passed on.
 * `nodes`: the nodes module's own cache (allocation annotations, prepared bytes).
 */
export type KindSource = 'watch-cache' | 'apiserver' | 'nodes';

/** One filter parameter of a kind. */
export interface KindFilter {
  /** What it does, for the OpenAPI document. */
  description: string;
  /** The accepted values (else any text); a value outside them is a 400 naming the parameter. */
  values?: readonly string[];
  /** A `fieldSelector` requirement the kube-apiserver applies itself (so fewer objects travel). */
  fieldSelector?: (value: string) => string;
  /** Otherwise matched here, per object. */
  matches?: (object: KubeObject, value: string) => boolean;
}

export interface ResourceKind {
  /** The plural resource name, which is also the path segment. */
  resource: string;
  kind: string;
  group: string;
  version: string;
  namespaced: boolean;
  source: KindSource;
  /** Why this source (docs/resources-api.md repeats it). */
  why: string;
  filters: Readonly<Record<string, KindFilter>>;
  extraSorts?: readonly SortBy[];
  /** `updateTime`/`lastUpdateTimestamp` where the kind has one; else the creation time. */
  updatedMs?: (object: KubeObject) => number;
  startedMs?: (object: KubeObject) => number;
  /** `?name=` where it is more than a substring of the name (CRDs: also the kind). */
  nameMatches?: (object: KubeObject, text: string) => boolean;
  /** The `fieldSelector` parameter passed to the kube-apiserver as it is (secrets, as the original). */
  fieldSelectorParameter?: boolean;
}

/** The kube-apiserver path of a kind's collection, in a namespace or across all. */
export function collectionPath(kind: ResourceKind, namespace?: string): string {
  const root = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  const scope = namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${root}${scope}/${kind.resource}`;
}

/** A value inside a field selector, escaped as the kube-apiserver's parser expects (`\\`, `,`, `=`). */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

export function apiVersionOf(kind: ResourceKind): string {
  return kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
}

const ownerFilters: Record<string, KindFilter> = {
  ownerReference: {
    description: 'UID of an owner (`metadata.ownerReferences[].uid`).',
    matches: (o, v) => (o.metadata?.ownerReferences ?? []).some((r) => r.uid === v),
  },
  ownerKind: {
    description: 'Kind of an owner (`metadata.ownerReferences[].kind`), e.g. `ReplicaSet`.',
    matches: (o, v) => (o.metadata?.ownerReferences ?? []).some((r) => r.kind === v),
  },
};

const statusFilter = (values: readonly string[], of: (o: KubeObject) => string): KindFilter => ({
  description: `The object's state as the original classifies it: ${values.join(', ')}.`,
  values,
  matches: (o, v) => of(o) === v,
});

/** PersistentVolume(Claim) phases, compared without regard to case as in the original. */
const phaseFilter: KindFilter = {
  description: '`status.phase`, compared without regard to case (e.g. `bound`).',
  matches: (o, v) => (text(field(o, 'status', 'phase')) ?? '').toLowerCase() === v.toLowerCase(),
};

/** The latest time in `status.conditions[].<key>`, else the creation time. */
const latestCondition =
  (key: string) =>
  (object: KubeObject): number => {
    let latest = creationMs(object);
    for (const c of list(field(object, 'status', 'conditions')))
      latest = Math.max(latest, timeMs(field(c, key)));
    return latest;
  };

const SMALL_AND_HOT =
  'Few objects, read by almost every page (the project selector, the overview): a watch keeps them in memory and a page costs no round trip.';
const PER_NAMESPACE =
  'Can be numerous (grows with workloads) and pages are asked per namespace or with selectors: listed from the kube-apiserver (its watch cache) as the caller, with the namespace, label selector and supported field selectors passed on.';
const CONSOLE_LISTS =
  "Lists of the console's busiest pages (a project's workloads and services): a watch keeps them in memory, a page is cut from the namespace's objects and its body remembered until they change, authorized by one cached SubjectAccessReview. A few kilobytes per object (docs/resources-api.md).";
const RARELY_READ =
  'Read by few pages and rarely; a cache would hold every object for nothing: listed from the kube-apiserver as the caller.';

function kind(
  resource: string,
  kindName: string,
  group: string,
  version: string,
  namespaced: boolean,
  source: KindSource,
  why: string,
  extra: Partial<ResourceKind> = {},
): ResourceKind {
  return {
    resource,
    kind: kindName,
    group,
    version,
    namespaced,
    source,
    why,
    ...extra,
    // The nodes module parses its own query (no owner filters, as before).
    filters: source === 'nodes' ? {} : { ...ownerFilters, ...extra.filters },
  };
}

export const POD_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'] as const;

/** Pods: the original's filters, with the node and phase passed to the kube-apiserver as field selectors. */
const pods = kind('pods', 'Pod', '', 'v1', true, 'apiserver', '', {
  why:
    "Tens of thousands in a large cluster, each several kilobytes: the nodes module's pod cache keeps each one packed " +
    '(under a kilobyte) with the fields pages are picked by. Pages it can pick (node, namespace, name, time or name ' +
    "order) are answered from it; other queries are listed from the kube-apiserver's watch cache as the caller: one " +
    "node's pods by `fieldSelector=spec.nodeName=` (indexed there), a namespace by its path, labels by `labelSelector`.",
  filters: {
    nodeName: {
      description: 'Pods on this node (`spec.nodeName`; passed on as a field selector).',
      fieldSelector: (v) => `spec.nodeName=${escapeFieldValue(v)}`,
      matches: (o, v) => field(o, 'spec', 'nodeName') === v,
    },
    phase: {
      description: '`status.phase` (passed on as a field selector).',
      values: POD_PHASES,
      fieldSelector: (v) => `status.phase=${escapeFieldValue(v)}`,
      matches: (o, v) => field(o, 'status', 'phase') === v,
    },
    pvcName: {
      description: 'Pods that mount this PersistentVolumeClaim.',
      matches: (o, v) =>
        list(field(o, 'spec', 'volumes')).some(
          (vol) => field(vol, 'persistentVolumeClaim', 'claimName') === v,
        ),
    },
    serviceName: {
      description:
        "Pods the Service of this name (in the pod's namespace) selects; none when it has no selector or does not exist.",
    },
    status: statusFilter(POD_STATUSES, podStatus),
  },
  extraSorts: ['startTime'],
  startedMs: (o) => timeMs(field(o, 'status', 'startTime')) || creationMs(o),
  updatedMs: latestCondition('lastTransitionTime'),
});

export const BUILT_IN_KINDS: readonly ResourceKind[] = [
  kind('nodes', 'Node', '', 'v1', false, 'nodes', '', {
    why: "The nodes module's watch-backed cache: the list carries each node's pod allocation annotations, prepared as bytes (docs/nodes-api.md).",
    filters: {},
  }),
  kind('namespaces', 'Namespace', '', 'v1', false, 'watch-cache', SMALL_AND_HOT, {
    filters: {
      status: statusFilter(['Active', 'Terminating'], (o) => text(field(o, 'status', 'phase')) ?? ''),
    },
  }),
  pods,
  kind('deployments', 'Deployment', 'apps', 'v1', true, 'watch-cache', CONSOLE_LISTS, {
    filters: { status: statusFilter(WORKLOAD_STATUSES, deploymentStatus) },
    updatedMs: latestCondition('lastUpdateTime'),
  }),
  kind('statefulsets', 'StatefulSet', 'apps', 'v1', true, 'watch-cache', CONSOLE_LISTS, {
    filters: { status: statusFilter(WORKLOAD_STATUSES, statefulSetStatus) },
  }),
  kind('daemonsets', 'DaemonSet', 'apps', 'v1', true, 'watch-cache', CONSOLE_LISTS, {
    filters: { status: statusFilter(WORKLOAD_STATUSES, daemonSetStatus) },
  }),
  kind('jobs', 'Job', 'batch', 'v1', true, 'watch-cache', CONSOLE_LISTS, {
    filters: { status: statusFilter(JOB_STATUSES, jobStatus) },
    updatedMs: latestCondition('lastTransitionTime'),
  }),
  kind('cronjobs', 'CronJob', 'batch', 'v1', true, 'watch-cache', CONSOLE_LISTS),
  kind('services', 'Service', '', 'v1', true, 'watch-cache', CONSOLE_LISTS),
  kind('ingresses', 'Ingress', 'networking.k8s.io', 'v1', true, 'apiserver', PER_NAMESPACE),
  kind('networkpolicies', 'NetworkPolicy', 'networking.k8s.io', 'v1', true, 'apiserver', PER_NAMESPACE),
  kind('configmaps', 'ConfigMap', '', 'v1', true, 'apiserver', PER_NAMESPACE),
  kind('secrets', 'Secret', '', 'v1', true, 'apiserver', '', {
    why:
      'Never cached by this server: a copy of every Secret in its memory would be a target. Listed from the kube-apiserver ' +
      'as the caller, so only a caller whom RBAC lets list Secrets gets them (as from the kube-apiserver itself).',
    fieldSelectorParameter: true,
  }),
  kind('serviceaccounts', 'ServiceAccount', '', 'v1', true, 'apiserver', PER_NAMESPACE),
  kind('persistentvolumeclaims', 'PersistentVolumeClaim', '', 'v1', true, 'apiserver', PER_NAMESPACE, {
    filters: {
      status: phaseFilter,
      storageClassName: {
        description: '`spec.storageClassName`.',
        matches: (o, v) => field(o, 'spec', 'storageClassName') === v,
      },
    },
  }),
  kind('persistentvolumes', 'PersistentVolume', '', 'v1', false, 'apiserver', RARELY_READ, {
    filters: {
      status: phaseFilter,
      storageClassName: {
        description: '`spec.storageClassName`.',
        matches: (o, v) => field(o, 'spec', 'storageClassName') === v,
      },
    },
  }),
  kind('storageclasses', 'StorageClass', 'storage.k8s.io', 'v1', false, 'apiserver', RARELY_READ),
  kind(
    'customresourcedefinitions',
    'CustomResourceDefinition',
    'apiextensions.k8s.io',
    'v1',
    false,
    'apiserver',
    'Few but large (each carries its whole OpenAPI schema, often hundreds of kilobytes), and read rarely: listed from the kube-apiserver as the caller.',
    {
      nameMatches: (o, v) =>
        (o.metadata?.name ?? '').includes(v) || (text(field(o, 'spec', 'names', 'kind')) ?? '').includes(v),
    },
  ),
  kind('roles', 'Role', 'rbac.authorization.k8s.io', 'v1', true, 'apiserver', PER_NAMESPACE),
  kind('rolebindings', 'RoleBinding', 'rbac.authorization.k8s.io', 'v1', true, 'apiserver', PER_NAMESPACE),
  kind('clusterroles', 'ClusterRole', 'rbac.authorization.k8s.io', 'v1', false, 'apiserver', RARELY_READ),
  kind(
    'clusterrolebindings',
    'ClusterRoleBinding',
    'rbac.authorization.k8s.io',
    'v1',
    false,
    'apiserver',
    RARELY_READ,
  ),
];

/** The parameter filters of a kind as list-query accepts them (name → accepted values). */
export function filterParameters(kind: ResourceKind): Record<string, readonly string[] | undefined> {
  const parameters: Record<string, readonly string[] | undefined> = {};
  for (const [name, filter] of Object.entries(kind.filters)) parameters[name] = filter.values;
  if (kind.namespaced) parameters['namespace'] = undefined;
  if (kind.fieldSelectorParameter) parameters['fieldSelector'] = undefined;
  return parameters;
}
