import type { FeatureModule } from '../http/feature-module.ts';
import { configRef, kubeConfigRef } from '../host-services.ts';
import { packageVersion } from '../version.ts';
import { monitoringApi } from './monitoring-api.ts';
import { monitoringRoutes } from './monitoring-routes.ts';
import { PlatformStatistics } from './platform-statistics.ts';

/** The original's monitoring API without a metrics backend: every requested metric, each with an error; the platform's counts. */
export const monitoringModule: FeatureModule = {
  name: 'monitoring',
  requires: [configRef, kubeConfigRef],
  register(ctx) {
    const { platformName } = ctx.get(configRef);
    const statistics = new PlatformStatistics({
      kubeConfig: ctx.get(kubeConfigRef),
      platformName,
      timeoutMs: 10_000,
    });
    return {
      edge: {
        protectedRoutes: [monitoringRoutes(platformName, statistics)],
        openApi: [monitoringApi({ platformName, version: packageVersion() })],
      },
      summary: { monitoring: 'not configured' },
    };
  },
};
