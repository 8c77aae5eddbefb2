import type { Router } from 'express';
import { accessReviewerRef } from '../access/access-module.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import type { ApiDescription } from '../http/openapi-components.ts';
import { cacheMetricsRef, configRef, kubeConfigRef, loggerRef, registryRef } from '../host-services.ts';
import { serviceRef } from '../kernel/module.ts';
import { packageVersion } from '../version.ts';
import { NodeCache } from './node-cache.ts';
import { nodesApi } from './nodes-api.ts';
import { nodesRoutes } from './nodes-routes.ts';
import { PodCache, type ClaimUsage, type PodIndexSource } from './pod-cache.ts';

/** The node routes and their OpenAPI description, mounted by the resources API as its `nodes` kind. */
export interface NodeRoutes {
  router: Router;
  openApi: ApiDescription;
}

export const nodeRoutesRef = serviceRef<NodeRoutes>('node-routes');

/** The pod cache's slim per-pod records, from which the resources API picks pod pages. */
export const podIndexRef = serviceRef<PodIndexSource>('pod-index');

/** Which PersistentVolumeClaims pods mount, from the same pod cache (the claims' `in-use` annotation). */
export const claimUsageRef = serviceRef<ClaimUsage>('claim-usage');

/** The cached node API: a watch-backed node cache, served paged, sorted and filtered. */
export const nodesModule: FeatureModule = {
  name: 'nodes',
  requires: [configRef, kubeConfigRef, loggerRef, registryRef, cacheMetricsRef, accessReviewerRef],
  provides: [nodeRoutesRef, podIndexRef, claimUsageRef],
  register(ctx) {
    const config = ctx.get(configRef);
    const kubeConfig = ctx.get(kubeConfigRef);
    const logger = ctx.get(loggerRef);
    const metrics = ctx.get(cacheMetricsRef);
    // Pod requests/limits per node, for the nodes' allocation annotations.
    const podCache = new PodCache({ kubeConfig, logger, metrics });
    const nodeCache = new NodeCache({
      kubeConfig,
      logger,
      metrics,
      platformName: config.platformName,
      allocations: podCache,
    });
    ctx.provide(podIndexRef, podCache);
    ctx.provide(claimUsageRef, podCache);
    ctx.provide(nodeRoutesRef, {
      router: nodesRoutes({
        platformName: config.platformName,
        nodes: nodeCache,
        authorizer: ctx.get(accessReviewerRef),
        registry: ctx.get(registryRef),
        gzipMinBytes: config.resources.gzipMinBytes,
        memoMaxBytes: config.resources.responseMemoMegabytes * 1024 * 1024,
      }),
      openApi: nodesApi({ platformName: config.platformName, version: packageVersion() }),
    });
    return {
      readiness: { 'pods-cache': () => podCache.synced, 'nodes-cache': () => nodeCache.synced },
      start: () => {
        podCache.start();
        nodeCache.start();
      },
      stop: async () => {
        await Promise.all([nodeCache.stop(), podCache.stop()]);
      },
    };
  },
};
