import { readFileSync } from 'node:fs';
import { accessReviewerRef } from '../access/access-module.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { configRef, kubeConfigRef } from '../host-services.ts';
import { packageVersion } from '../version.ts';
import { monitoringApi } from './monitoring-api.ts';
import { monitoringRoutes, type AuthorizeMonitoring } from './monitoring-routes.ts';
import { PlatformStatistics } from './platform-statistics.ts';
import { WorkspaceStatistics } from './workspace-statistics.ts';
import { workspaceAccessRef } from '../tenant/tenant-module.ts';
import { configuredMonitoring } from './configured-monitoring.ts';
import { namespaceCreation } from './namespace-creation.ts';

/**
 * The original's monitoring API: named metrics, ranking and ad hoc queries asked of Prometheus when
 * `monitoring.endpoint` is set (each metric with an error saying so when not); real platform and
 * workspace counts either way.
 */
export const monitoringModule: FeatureModule = {
  name: 'monitoring',
  requires: [configRef, kubeConfigRef, workspaceAccessRef, accessReviewerRef],
  register(ctx) {
    const config = ctx.get(configRef);
    const { platformName } = config;
    const kubeConfig = ctx.get(kubeConfigRef);
    const access = ctx.get(workspaceAccessRef);
    const reviewer = ctx.get(accessReviewerRef);
    const timeoutMs = 10_000;
    const monitoring = configuredMonitoring(config.monitoring, {
      readFile: (p) => readFileSync(p, 'utf8'),
      namespaceCreated: namespaceCreation(kubeConfig, timeoutMs),
    });
    const seeWorkspace = (identity: Parameters<AuthorizeMonitoring>[0], workspace: string) =>
      access.workspace(identity, 'workspacetemplates', workspace);
    // Metrics are read access to what they measure: the nodes, every namespace's pods, a workspace, or
    // one namespace's pods.
    const authorize: AuthorizeMonitoring = (identity, audience) => {
      switch (audience.scope) {
        case 'nodes':
          return reviewer.authorize(identity, { verb: 'list', group: '', resource: 'nodes' });
        case 'cluster':
          return reviewer.authorize(identity, { verb: 'list', group: '', resource: 'pods' });
        case 'workspace':
          return seeWorkspace(identity, audience.workspace);
        case 'namespace':
          return reviewer.authorize(identity, {
            verb: 'list',
            group: '',
            resource: 'pods',
            namespace: audience.namespace,
          });
      }
    };
    return {
      edge: {
        protectedRoutes: [
          monitoringRoutes({
            platformName,
            platform: new PlatformStatistics({ kubeConfig, platformName, timeoutMs }),
            workspaces: new WorkspaceStatistics({ kubeConfig, platformName, timeoutMs }),
            seeWorkspace,
            authorize,
            ...(monitoring ? { service: monitoring.service } : {}),
          }),
        ],
        openApi: [monitoringApi({ platformName, version: packageVersion() })],
      },
      stop: () => monitoring?.prometheus.close(),
      summary: { monitoring: monitoring ? config.monitoring.endpoint : 'not configured' },
    };
  },
};
