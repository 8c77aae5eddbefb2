import { accessReviewerRef } from '../access/access-module.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { cacheMetricsRef, configRef, kubeConfigRef, loggerRef, registryRef } from '../host-services.ts';
import { claimUsageRef, nodeRoutesRef, podIndexRef } from '../nodes/nodes-module.ts';
import { serviceRef } from '../kernel/module.ts';
import { packageVersion } from '../version.ts';
import { CallerLister } from './caller-lister.ts';
import { claimAnnotator, storageClassAnnotator, type Annotator } from './computed-annotations.ts';
import { CachedKindReader, UpstreamKindReader, type KindReader } from './kind-readers.ts';
import { BUILT_IN_KINDS, type ResourceKind } from './kinds.ts';
import { PodIndexReader } from './pod-index-reader.ts';
import { overviewApi } from './overview-api.ts';
import { overviewRoutes } from './overview-routes.ts';
import { resourcesApi } from './resources-api.ts';
import { resourcesRoutes } from './resources-routes.ts';
import type { KubeObject } from './kube-object.ts';
import { SnapshotClassDrivers } from './snapshot-class-drivers.ts';
import { StorageClassUsage } from './storage-class-usage.ts';
import { WatchedKind } from './watched-kind.ts';

/** The namespaces, from this module's watch-backed cache: for features that answer per namespace. */
export interface NamespaceCache {
  get(name: string): KubeObject | undefined;
  list(): KubeObject[];
}
export const namespaceCacheRef = serviceRef<NamespaceCache>('namespace-cache');

/**
 * The generic resources API (`/kapis/resources.<platform>.io/v1alpha3/…`) over the built-in kinds,
 * nodes included (the nodes module serves them), and the overview cards of v1alpha2.
 */
export const resourcesModule: FeatureModule = {
  name: 'resources',
  requires: [
    configRef,
    kubeConfigRef,
    loggerRef,
    registryRef,
    cacheMetricsRef,
    accessReviewerRef,
    nodeRoutesRef,
    podIndexRef,
    claimUsageRef,
  ],
  provides: [namespaceCacheRef],
  register(ctx) {
    const config = ctx.get(configRef);
    const kubeConfig = ctx.get(kubeConfigRef);
    const authorizer = ctx.get(accessReviewerRef);
    const registry = ctx.get(registryRef);
    const nodes = ctx.get(nodeRoutesRef);
    const lister = new CallerLister({ kubeConfig });
    const readerOptions = { aliasAnnotation: `${config.platformName}.io/alias-name` };
    const cacheOptions = { kubeConfig, logger: ctx.get(loggerRef), metrics: ctx.get(cacheMetricsRef) };

    // The computed annotations of the kinds read as the caller, from caches of our own.
    const claimClasses = new StorageClassUsage(cacheOptions);
    const snapshotDrivers = new SnapshotClassDrivers(cacheOptions);
    const annotators: Readonly<Record<string, Annotator>> = {
      storageclasses: storageClassAnnotator(config.platformName, claimClasses),
      persistentvolumeclaims: claimAnnotator(config.platformName, ctx.get(claimUsageRef), snapshotDrivers),
    };

    const memoMaxBytes = config.resources.responseMemoMegabytes * 1024 * 1024;
    const caches: WatchedKind[] = [];
    const served: { kind: ResourceKind; reader: KindReader }[] = [];
    for (const kind of BUILT_IN_KINDS) {
      if (kind.source === 'nodes') continue;
      if (kind.source === 'watch-cache') {
        const cache = new WatchedKind({
          kind,
          kubeConfig,
          logger: ctx.get(loggerRef),
          metrics: ctx.get(cacheMetricsRef),
        });
        caches.push(cache);
        if (kind.resource === 'namespaces')
          ctx.provide(namespaceCacheRef, { get: (name) => cache.get(name), list: () => cache.objects() });
        served.push({ kind, reader: new CachedKindReader(cache, { ...readerOptions, memoMaxBytes }) });
      } else if (kind.resource === 'pods') {
        const upstream = new UpstreamKindReader(kind, lister, readerOptions);
        const index = ctx.get(podIndexRef);
        const logger = ctx.get(loggerRef);
        served.push({ kind, reader: new PodIndexReader({ index, upstream, logger, memoMaxBytes }) });
      } else {
        const annotator = annotators[kind.resource];
        served.push({ kind, reader: new UpstreamKindReader(kind, lister, readerOptions, annotator) });
      }
    }

    const apiContext = { platformName: config.platformName, version: packageVersion() };
    return {
      edge: {
        protectedRoutes: [
          ...resourcesRoutes({
            platformName: config.platformName,
            kinds: served,
            nodes: nodes.router,
            authorizer,
            registry,
            gzipMinBytes: config.resources.gzipMinBytes,
          }),
          overviewRoutes({ platformName: config.platformName, lister }),
        ],
        openApi: [
          nodes.openApi,
          resourcesApi(
            apiContext,
            served.map((s) => s.kind),
          ),
          overviewApi(apiContext),
        ],
      },
      readiness: {
        ...Object.fromEntries(caches.map((c) => [`${c.kind.resource}-cache`, () => c.synced])),
        'persistentvolumeclaims-cache': () => claimClasses.synced,
        'volumesnapshotclasses-cache': () => snapshotDrivers.ready,
      },
      start: () => {
        for (const cache of caches) cache.start();
        claimClasses.start();
        snapshotDrivers.start();
      },
      stop: async () => {
        await Promise.all([
          ...caches.map((c) => c.stop()),
          claimClasses.stop(),
          snapshotDrivers.stop(),
          lister.close(),
        ]);
      },
    };
  },
};
