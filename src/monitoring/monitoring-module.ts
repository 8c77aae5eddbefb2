import type { FeatureModule } from '../http/feature-module.ts';
import { configRef } from '../host-services.ts';
import { packageVersion } from '../version.ts';
import { monitoringApi } from './monitoring-api.ts';
import { monitoringRoutes } from './monitoring-routes.ts';

/** The original's monitoring API without a metrics backend: every requested metric, each with an error. */
export const monitoringModule: FeatureModule = {
  name: 'monitoring',
  requires: [configRef],
  register(ctx) {
    const { platformName } = ctx.get(configRef);
    return {
      edge: {
        protectedRoutes: [monitoringRoutes(platformName)],
        openApi: [monitoringApi({ platformName, version: packageVersion() })],
      },
      summary: { monitoring: 'not configured' },
    };
  },
};
