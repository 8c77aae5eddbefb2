import { kubeRequest } from '../cluster/kube-request.ts';
import { bearerDoorRef, type FeatureModule } from '../http/feature-module.ts';
import { configRef, kubeConfigRef, loggerRef, registryRef } from '../host-services.ts';
import { sessionSignalsRef } from '../kernel/session-signals.ts';
import { createKubeProxy, kubeProxyRoutes } from './kube-proxy-routes.ts';
import { KubeVersionCache, type KubeVersion } from '../cluster/kube-version.ts';
import { kubeVersionApi } from './kube-version-api.ts';
import { kubeVersionRoutes } from './kube-version-routes.ts';
import { createStreamMetrics } from './stream-metrics.ts';
import { StreamRegistry } from './stream-registry.ts';

/**
 * /api, /apis and the cluster's OpenAPI documents, proxied as the caller; WebSocket upgrades too. Open
 * streams and upgrades end with their session. /version is the kube-apiserver's.
 */
export const kubeProxyModule: FeatureModule = {
  name: 'kube-proxy',
  requires: [configRef, kubeConfigRef, loggerRef, registryRef, bearerDoorRef, sessionSignalsRef],
  async register(ctx) {
    const logger = ctx.get(loggerRef);
    const kubeConfig = ctx.get(kubeConfigRef);
    const signals = ctx.get(sessionSignalsRef);
    const door = ctx.get(bearerDoorRef);
    const streams: StreamRegistry = new StreamRegistry({
      lookup: (owner) => signals.lookup(owner),
      onEnded: createStreamMetrics(ctx.get(registryRef), () => streams.size), // read at scrape time
      onLookupError: (err) => logger.warn('stream session lookup failed', { error: String(err) }),
    });
    const proxy = await createKubeProxy({
      kubeConfig,
      logger,
      registry: ctx.get(registryRef),
      responseTimeoutMs: ctx.get(configRef).proxy.responseTimeoutSeconds * 1000,
      door,
      streams,
    });
    const versions = new KubeVersionCache({
      fetch: () => kubeRequest<KubeVersion>(kubeConfig, '/version', { timeoutMs: 5000 }),
      ttlMs: 60_000,
    });
    let unsubscribe = () => {};
    return {
      edge: {
        publicRoutes: [kubeVersionRoutes({ versions, door })],
        protectedRoutes: [kubeProxyRoutes(proxy)],
        upgrade: proxy.upgrade,
        openApi: [kubeVersionApi()],
      },
      start() {
        unsubscribe = signals.subscribe(streams);
      },
      stop() {
        unsubscribe();
        streams.close();
      },
    };
  },
};
