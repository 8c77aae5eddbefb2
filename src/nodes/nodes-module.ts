import { accessReviewerRef } from '../access/access-module.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { cacheMetricsRef, configRef, kubeConfigRef, loggerRef, registryRef } from '../host-services.ts';
import { packageVersion } from '../version.ts';
import { NodeCache } from './node-cache.ts';
import { nodesApi } from './nodes-api.ts';
import { nodesRoutes } from './nodes-routes.ts';

/** The cached node API: a watch-backed node cache, served paged, sorted and filtered. */
export const nodesModule: FeatureModule = {
  name: 'nodes',
  requires: [configRef, kubeConfigRef, loggerRef, registryRef, cacheMetricsRef, accessReviewerRef],
  register(ctx) {
    const config = ctx.get(configRef);
    const nodeCache = new NodeCache({
      kubeConfig: ctx.get(kubeConfigRef),
      logger: ctx.get(loggerRef),
      metrics: ctx.get(cacheMetricsRef),
    });
    return {
      edge: {
        protectedRoutes: [
          nodesRoutes({
            platformName: config.platformName,
            nodes: nodeCache,
            authorizer: ctx.get(accessReviewerRef),
            registry: ctx.get(registryRef),
            gzipMinBytes: config.resources.gzipMinBytes,
            memoMaxBytes: config.resources.responseMemoMegabytes * 1024 * 1024,
          }),
        ],
        openApi: [nodesApi({ platformName: config.platformName, version: packageVersion() })],
      },
      readiness: { 'nodes-cache': () => nodeCache.synced },
      start: () => nodeCache.start(),
      stop: () => nodeCache.stop(),
    };
  },
};
