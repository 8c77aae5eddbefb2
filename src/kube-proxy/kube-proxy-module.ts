import { bearerDoorRef, type FeatureModule } from '../http/feature-module.ts';
import { configRef, kubeConfigRef, loggerRef, registryRef } from '../host-services.ts';
import { createKubeProxy, kubeProxyRoutes } from './kube-proxy-routes.ts';

/** /api, /apis and the cluster's OpenAPI documents, proxied as the caller; WebSocket upgrades too. */
export const kubeProxyModule: FeatureModule = {
  name: 'kube-proxy',
  requires: [configRef, kubeConfigRef, loggerRef, registryRef, bearerDoorRef],
  async register(ctx) {
    const proxy = await createKubeProxy({
      kubeConfig: ctx.get(kubeConfigRef),
      logger: ctx.get(loggerRef),
      registry: ctx.get(registryRef),
      responseTimeoutMs: ctx.get(configRef).proxy.responseTimeoutSeconds * 1000,
      door: ctx.get(bearerDoorRef),
    });
    return { edge: { protectedRoutes: [kubeProxyRoutes(proxy)], upgrade: proxy.upgrade } };
  },
};
