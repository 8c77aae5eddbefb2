import { METRICS, type Level } from './metric-table.ts';

/** What a request names, as the original's routes take it from the path and the query. */
export interface Scope {
  /** `resources_filter` (a regular expression over the level's resource names; `.*` when absent). */
  resourceFilter: string;
  node?: string;
  workspace?: string;
  namespace?: string;
  /** The path's kind: `deployment`, `statefulset`, `daemonset` (anything else: every kind). */
  workloadKind?: string;
  workload?: string;
  pod?: string;
  container?: string;
  pvc?: string;
  storageClass?: string;
  ingress?: string;
  /** Cluster-wide pods: `namespaced_resources_filter`, `<namespace>/<pod>|…` without a closing `$`. */
  namespacedPods?: string;
  /** Ingress: the controller's scrape job, its pod, and the range of its rates (`5m` by default). */
  job?: string;
  ingressRange?: string;
  /** `<platformName>-system`: its ingress controller's series are every namespace's (no namespace matcher). */
  systemNamespace?: string;
}

/** The metric names a level knows, in the original's order. */
export function metricNames(level: Level): string[] {
  return Object.keys(METRICS[level]);
}

const WORKLOAD_KINDS: Readonly<Record<string, string>> = {
  deployment: 'Deployment',
  statefulset: 'StatefulSet',
  daemonset: 'DaemonSet',
};

/**
 * The PromQL of one named metric for this scope. The matchers are built as the original builds them,
 * values unescaped included: the original puts the request's names and regular expressions between
 * double quotes as they come, so a value with a `"` makes Prometheus refuse the query (that metric's
 * error) rather than widen it.
 */
export function expressionOf(level: Level, metric: string, scope: Scope): string {
  const template = (METRICS[level] as Record<string, string>)[metric];
  if (template === undefined) throw new Error(`no metric ${metric} at level ${level}`);
  const fill = (values: Record<string, string>) =>
    template.replace(/%([SKOJD])%/g, (_, key: string) => values[key] ?? '');
  const f = scope.resourceFilter;
  switch (level) {
    case 'node':
      return fill({ S: scope.node ? `node="${scope.node}"` : `node=~"${f}"` });
    case 'workspace':
      return fill({
        S: scope.workspace ? `workspace="${scope.workspace}"` : `workspace=~"${f}", workspace!=""`,
      });
    case 'namespace':
      return fill({ S: namespaceMatchers(scope) });
    case 'workload':
      return fill(workloadMatchers(metric, scope));
    case 'pod':
      return fill({ O: ownerMatchers(scope), S: podMatchers(scope) });
    case 'container':
      return fill({
        S: `pod="${scope.pod}", namespace="${scope.namespace}", ${
          scope.container ? `container="${scope.container}"` : `container=~"${f}"`
        }`,
      });
    case 'pvc':
      return fill({ S: pvcMatchers(scope) });
    case 'ingress':
      return fill(ingressMatchers(scope));
    default:
      return template;
  }
}

function namespaceMatchers(scope: Scope): string {
  if (scope.workspace) return `workspace="${scope.workspace}", namespace=~"${scope.resourceFilter}"`;
  return scope.namespace ? `namespace="${scope.namespace}"` : `namespace=~"${scope.resourceFilter}"`;
}

function workloadMatchers(metric: string, scope: Scope): Record<string, string> {
  const kind = WORKLOAD_KINDS[scope.workloadKind ?? ''] ?? '.*';
  const ns = scope.namespace ?? '';
  const f = scope.resourceFilter;
  // The replica metrics read kube-state-metrics' own per-kind label.
  const kindLabel = ['deployment', 'statefulset', 'daemonset'].filter((k) => metric.includes(k)).at(-1);
  return {
    S: `namespace="${ns}", workload=~"${kind}:(${f})"`,
    K: kindLabel ? `namespace="${ns}", ${kindLabel}!="", ${kindLabel}=~"${f}"` : '',
  };
}

function ownerMatchers(scope: Scope): string {
  if (!scope.workload) return '';
  switch (scope.workloadKind) {
    case 'deployment':
      return `owner_kind="ReplicaSet", owner_name=~"^${scope.workload}-[^-]{1,10}$"`;
    case 'statefulset':
      return `owner_kind="StatefulSet", owner_name="${scope.workload}"`;
    case 'daemonset':
      return `owner_kind="DaemonSet", owner_name="${scope.workload}"`;
    default:
      return '';
  }
}

function podMatchers(scope: Scope): string {
  const f = scope.resourceFilter;
  if (scope.namespace) {
    return scope.pod
      ? `pod="${scope.pod}", namespace="${scope.namespace}"`
      : `pod=~"${f}", namespace="${scope.namespace}"`;
  }
  const namespaces: string[] = [];
  const pods: string[] = [];
  if (scope.namespacedPods) {
    for (const entry of scope.namespacedPods.split('|')) {
      const slash = entry.indexOf('/');
      if (slash >= 0) {
        namespaces.push(entry.slice(0, slash));
        pods.push(entry.slice(slash + 1));
      } else pods.push(entry);
    }
  }
  const matchers: string[] = [];
  if (scope.node) {
    if (scope.pod) {
      const slash = scope.pod.indexOf('/');
      return slash >= 0
        ? `namespace="${scope.pod.slice(0, slash)}",pod="${scope.pod.slice(slash + 1)}", node="${scope.node}"`
        : `pod="${scope.pod}", node="${scope.node}"`;
    }
    matchers.push(`node="${scope.node}"`);
    if (f !== '') matchers.push(`pod=~"${f}"`);
  }
  if (namespaces.length > 0) matchers.push(`namespace=~"${namespaces.join('|')}"`);
  if (pods.length > 0) matchers.push(`pod=~"${pods.join('|')}"`);
  return matchers.join(',');
}

function pvcMatchers(scope: Scope): string {
  const f = scope.resourceFilter;
  if (scope.namespace) {
    return scope.pvc
      ? `namespace="${scope.namespace}", persistentvolumeclaim="${scope.pvc}"`
      : `namespace="${scope.namespace}", persistentvolumeclaim=~"${f}"`;
  }
  return scope.storageClass ? `storageclass="${scope.storageClass}", persistentvolumeclaim=~"${f}"` : '';
}

function ingressMatchers(scope: Scope): Record<string, string> {
  const f = scope.resourceFilter;
  const own = scope.ingress ? `ingress="${scope.ingress}"` : `ingress=~"${f}"`;
  const S =
    scope.namespace === scope.systemNamespace ? own : `exported_namespace="${scope.namespace}", ${own}`;
  let J = '';
  if (scope.job) J = scope.pod ? `job="${scope.job}",controller_pod="${scope.pod}"` : `job="${scope.job}"`;
  return { S, J, D: scope.ingressRange ?? '5m' };
}

/**
 * Pods named by `namespaced_resources_filter` are kept only when their namespace and name were asked
 * together (the matchers above select the cross product). Series without labels are dropped.
 */
export function namespacedPodFilter(scope: Scope): ((labels: Record<string, string>) => boolean) | undefined {
  if (!scope.namespacedPods) return undefined;
  const wanted = new Set(scope.namespacedPods.split('|'));
  return (labels) =>
    Object.keys(labels).length > 0 && wanted.has(`${labels['namespace'] ?? ''}/${labels['pod'] ?? ''}`);
}
