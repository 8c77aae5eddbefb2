import { Router, type Request, type Response } from 'express';
import { identityOf } from '../http/request-context.ts';
import type { Identity } from '../kernel/identity.ts';
import type { Scope } from './metric-expressions.ts';
import type { Level } from './metric-table.ts';
import type { MonitoringService } from './monitoring-service.ts';
import { NAMED_METRICS_PATHS, TARGET_PATHS, WORKSPACE_STATISTICS } from './monitoring-paths.ts';
import { goDurationText } from './go-duration.ts';
import {
  NOT_CONFIGURED,
  requestedMetrics,
  singleParameter,
  unconfiguredAnswer,
} from './unconfigured-metrics.ts';
import type { PlatformStatistics } from './platform-statistics.ts';
import type { WorkspaceStatistics } from './workspace-statistics.ts';
import { goDurationSeconds, parameter } from './query-parameters.ts';

/** `/kapis/monitoring.<p>.io/v1alpha3` */
export function monitoringApiPath(platformName: string): string {
  return `/kapis/monitoring.${platformName}.io/v1alpha3`;
}

/** Whose data a request reads: the whole cluster (its nodes, or every namespace's pods), a workspace or a namespace. */
export type MonitoringAudience =
  | { scope: 'nodes' }
  | { scope: 'cluster' }
  | { scope: 'workspace'; workspace: string }
  | { scope: 'namespace'; namespace: string };

/** Throws the 403 (or 503) to answer when the identity may not read that audience's metrics. */
export type AuthorizeMonitoring = (identity: Identity, audience: MonitoringAudience) => Promise<unknown>;

type Params = Record<string, string>;

/** Each named-metrics route: its level, what it names, and whose data it reads. */
const ROUTES: Record<
  (typeof NAMED_METRICS_PATHS)[number],
  (p: Params) => { level: Level; scope: Partial<Scope>; audience: MonitoringAudience }
> = {
  '/cluster': () => ({ level: 'cluster', scope: {}, audience: { scope: 'nodes' } }),
  '/nodes': () => ({ level: 'node', scope: {}, audience: { scope: 'nodes' } }),
  '/nodes/:node': (p) => ({ level: 'node', scope: { node: p['node']! }, audience: { scope: 'nodes' } }),
  '/workspaces': () => ({ level: 'workspace', scope: {}, audience: { scope: 'cluster' } }),
  '/workspaces/:workspace': (p) => ({
    level: 'workspace',
    scope: { workspace: p['workspace']! },
    audience: { scope: 'workspace', workspace: p['workspace']! },
  }),
  '/workspaces/:workspace/namespaces': (p) => ({
    level: 'namespace',
    scope: { workspace: p['workspace']! },
    audience: { scope: 'workspace', workspace: p['workspace']! },
  }),
  '/namespaces': () => ({ level: 'namespace', scope: {}, audience: { scope: 'cluster' } }),
  '/namespaces/:namespace': (p) => inNamespace(p, 'namespace', {}),
  '/namespaces/:namespace/workloads': (p) => inNamespace(p, 'workload', {}),
  '/namespaces/:namespace/workloads/:kind': (p) => inNamespace(p, 'workload', { workloadKind: p['kind']! }),
  '/pods': () => ({ level: 'pod', scope: {}, audience: { scope: 'cluster' } }),
  '/namespaces/:namespace/pods': (p) => inNamespace(p, 'pod', {}),
  '/namespaces/:namespace/pods/:pod': (p) => inNamespace(p, 'pod', { pod: p['pod']! }),
  '/namespaces/:namespace/workloads/:kind/:workload/pods': (p) =>
    inNamespace(p, 'pod', { workloadKind: p['kind']!, workload: p['workload']! }),
  '/nodes/:node/pods': (p) => ({ level: 'pod', scope: { node: p['node']! }, audience: { scope: 'nodes' } }),
  '/nodes/:node/pods/:pod': (p) => ({
    level: 'pod',
    scope: { node: p['node']!, pod: p['pod']! },
    audience: { scope: 'nodes' },
  }),
  '/namespaces/:namespace/pods/:pod/containers': (p) => inNamespace(p, 'container', { pod: p['pod']! }),
  '/namespaces/:namespace/pods/:pod/containers/:container': (p) =>
    inNamespace(p, 'container', { pod: p['pod']!, container: p['container']! }),
  '/storageclasses/:storageclass/persistentvolumeclaims': (p) => ({
    level: 'pvc',
    scope: { storageClass: p['storageclass']! },
    audience: { scope: 'cluster' },
  }),
  '/namespaces/:namespace/persistentvolumeclaims': (p) => inNamespace(p, 'pvc', {}),
  '/namespaces/:namespace/persistentvolumeclaims/:pvc': (p) => inNamespace(p, 'pvc', { pvc: p['pvc']! }),
  '/namespaces/:namespace/ingresses': (p) => inNamespace(p, 'ingress', {}),
  '/namespaces/:namespace/ingresses/:ingress': (p) => inNamespace(p, 'ingress', { ingress: p['ingress']! }),
  '/components/:component': () => ({ level: 'cluster', scope: {}, audience: { scope: 'nodes' } }),
};

function inNamespace(p: Params, level: Level, scope: Partial<Scope>) {
  const namespace = p['namespace']!;
  return { level, scope: { ...scope, namespace }, audience: { scope: 'namespace' as const, namespace } };
}

/** `/components/{component}`: the three the original knows; another names no metric. */
const COMPONENTS: Readonly<Record<string, Level>> = {
  etcd: 'etcd',
  apiserver: 'apiserver',
  scheduler: 'scheduler',
};

/**
 * The original's monitoring API. With a Prometheus (`service`), named metrics are asked of it as the
 * original asks them, each request authorized for the data it reads; without one, every requested
 * metric answers 200 with an error saying so — the shape the original answers when its backend fails —
 * so the console shows empty charts rather than an error toast. The counts the original takes from its
 * caches rather than its backend are real either way: the platform's (`…/kubesphere`, for any
 * authenticated caller) and a workspace's (`…/workspaces/{ws}?type=statistics`, for whom may see it).
 */
export function monitoringRoutes(deps: {
  platformName: string;
  platform: PlatformStatistics;
  workspaces: WorkspaceStatistics;
  /** Throws the 403/404 to answer when the caller may not see the workspace. */
  seeWorkspace: (identity: Identity, workspace: string) => Promise<unknown>;
  /** Undefined: monitoring is not configured. */
  service?: MonitoringService;
  authorize: AuthorizeMonitoring;
}): Router {
  const { platformName, service } = deps;
  const base = monitoringApiPath(platformName);
  const router = Router();
  const send = (res: Response, body: unknown) => res.set('Cache-Control', 'no-store').json(body);
  const now = () => Math.floor(Date.now() / 1000);

  for (const path of NAMED_METRICS_PATHS) {
    router.get(`${base}${path}`, async (req: Request<Params>, res: Response) => {
      const identity = identityOf(req);
      if (path === '/workspaces/:workspace' && singleParameter(req.query, 'type') === 'statistics') {
        await deps.seeWorkspace(identity, req.params['workspace']!);
        send(res, { results: await deps.workspaces.metrics(req.params['workspace']!, now()) });
        return;
      }
      // Statistics of no workspace in particular: nothing to count.
      if (path === '/workspaces' && singleParameter(req.query, 'type') === 'statistics') {
        send(res, unconfiguredAnswer(WORKSPACE_STATISTICS));
        return;
      }
      if (!service) {
        send(res, unconfiguredAnswer(requestedMetrics(singleParameter(req.query, 'metrics_filter'))));
        return;
      }
      const route = ROUTES[path](req.params);
      await deps.authorize(identity, route.audience);
      let level = route.level;
      if (path === '/components/:component') {
        const component = COMPONENTS[req.params['component'] ?? ''];
        if (!component) {
          send(res, { results: [] });
          return;
        }
        level = component;
      }
      send(res, await service.named(level, scopeOf(req, route.scope, platformName), req.query));
    });
  }
  router.get(`${base}/kubesphere`, async (_req, res) => {
    send(res, { results: await deps.platform.metrics(now()) });
  });

  const namespaceOf = (req: Request<Params>) => req.params['namespace'];
  const authorizeTargets = async (req: Request<Params>) => {
    const namespace = namespaceOf(req);
    await deps.authorize(
      identityOf(req),
      namespace ? { scope: 'namespace', namespace } : { scope: 'cluster' },
    );
    return namespace;
  };
  for (const path of TARGET_PATHS.metadata)
    router.get(`${base}${path}`, async (req: Request<Params>, res) => {
      if (!service) return send(res, { data: [] });
      send(res, await service.metadata(await authorizeTargets(req)));
    });
  for (const path of TARGET_PATHS.labelsets)
    router.get(`${base}${path}`, async (req: Request<Params>, res) => {
      if (!service) return send(res, { data: [] });
      send(res, await service.labelSets(await authorizeTargets(req), req.query));
    });
  for (const path of TARGET_PATHS.query)
    router.get(`${base}${path}`, async (req: Request<Params>, res) => {
      if (!service) return send(res, { data: {}, error: NOT_CONFIGURED });
      send(res, await service.custom(await authorizeTargets(req), req.query));
    });
  return router;
}

/** The route's names plus what the query adds: `resources_filter`, and the ingress and pod options. */
function scopeOf(req: Request, fromPath: Partial<Scope>, platformName: string): Scope {
  const q = req.query;
  const scope: Scope = { resourceFilter: parameter(q, 'resources_filter') ?? '.*', ...fromPath };
  const namespacedPods = parameter(q, 'namespaced_resources_filter')?.replace(/\$+$/, '');
  if (namespacedPods) scope.namespacedPods = namespacedPods;
  const job = parameter(q, 'job');
  if (job) scope.job = job;
  // The original reads `duration` only for an instant query, and ignores one Go cannot parse.
  const duration = parameter(q, 'duration');
  if (parameter(q, 'time') !== undefined && duration !== undefined) {
    try {
      scope.ingressRange = goDurationText(goDurationSeconds(duration));
    } catch {
      // as the original: the default range
    }
  }
  scope.systemNamespace = `${platformName}-system`;
  return scope;
}
