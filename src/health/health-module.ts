import { FirstContact } from '../cluster/first-contact.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { kubeConfigRef, loggerRef, metricsExportRef, readinessRef } from '../host-services.ts';
import { healthApi } from './health-api.ts';
import { healthRoutes } from './health-routes.ts';
import { metricsRoutes } from './metrics-routes.ts';
import { observabilityApi } from './observability-api.ts';

/** Probes and /metrics; ready once the kube-apiserver has answered. */
export const healthModule: FeatureModule = {
  name: 'health',
  requires: [loggerRef, metricsExportRef, kubeConfigRef, readinessRef],
  register(ctx) {
    const kubeConfig = ctx.get(kubeConfigRef);
    const firstContact = new FirstContact(kubeConfig, ctx.get(loggerRef));
    return {
      edge: {
        publicRoutes: [healthRoutes(ctx.get(readinessRef)), metricsRoutes(ctx.get(metricsExportRef))],
        openApi: [healthApi(), observabilityApi()],
      },
      readiness: { 'kube-apiserver': () => firstContact.reached },
      start: () => firstContact.start(),
      stop: () => firstContact.stop(),
      summary: { kubernetes: kubeConfig.getCurrentCluster()?.server },
    };
  },
};
