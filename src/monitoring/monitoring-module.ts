import type { FeatureModule } from '../http/feature-module.ts';
import { configRef, kubeConfigRef } from '../host-services.ts';
import { packageVersion } from '../version.ts';
import { monitoringApi } from './monitoring-api.ts';
import { monitoringRoutes } from './monitoring-routes.ts';
import { PlatformStatistics } from './platform-statistics.ts';
import { WorkspaceStatistics } from './workspace-statistics.ts';
import { workspaceAccessRef } from '../tenant/tenant-module.ts';

/** The original's monitoring API without a metrics backend: every requested metric with an error; real platform and workspace counts. */
export const monitoringModule: FeatureModule = {
  name: 'monitoring',
  requires: [configRef, kubeConfigRef, workspaceAccessRef],
  register(ctx) {
    const { platformName } = ctx.get(configRef);
    const kubeConfig = ctx.get(kubeConfigRef);
    const access = ctx.get(workspaceAccessRef);
    const timeoutMs = 10_000;
    return {
      edge: {
        protectedRoutes: [
          monitoringRoutes({
            platformName,
            platform: new PlatformStatistics({ kubeConfig, platformName, timeoutMs }),
            workspaces: new WorkspaceStatistics({ kubeConfig, platformName, timeoutMs }),
            seeWorkspace: (identity, workspace) =>
              access.workspace(identity, 'workspacetemplates', workspace),
          }),
        ],
        openApi: [monitoringApi({ platformName, version: packageVersion() })],
      },
      summary: { monitoring: 'not configured' },
    };
  },
};
