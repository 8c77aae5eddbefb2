import { accessReviewerRef } from '../access/access-module.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { configRef, kubeConfigRef } from '../host-services.ts';
import { serviceRef } from '../kernel/module.ts';
import { packageVersion } from '../version.ts';
import { tenantApi } from './tenant-api.ts';
import { tenantRoutes } from './tenant-routes.ts';
import { TenantStore, tenantNames } from './tenant-store.ts';
import { TenantWriter } from './tenant-writes.ts';
import { WorkspaceAccess } from './workspace-access.ts';

/** Bounds each read of tenant objects from the kube-apiserver. */
const READ_TIMEOUT_MS = 10_000;

/** What a caller may see of workspaces, for features that answer per workspace (monitoring's statistics). */
export const workspaceAccessRef = serviceRef<WorkspaceAccess>('workspace-access');

/** The original's tenant API (workspaces and their namespaces), as its console reads it. */
export const tenantModule: FeatureModule = {
  name: 'tenant',
  requires: [configRef, kubeConfigRef, accessReviewerRef],
  provides: [workspaceAccessRef],
  register(ctx) {
    const { platformName } = ctx.get(configRef);
    const names = tenantNames(platformName);
    const store = new TenantStore({ kubeConfig: ctx.get(kubeConfigRef), names, timeoutMs: READ_TIMEOUT_MS });
    const access = new WorkspaceAccess({ store, access: ctx.get(accessReviewerRef), names });
    ctx.provide(workspaceAccessRef, access);
    const writer = new TenantWriter({ store, access: ctx.get(accessReviewerRef), names, platformName });
    return {
      edge: {
        protectedRoutes: [tenantRoutes({ platformName, names, access, writer })],
        openApi: [tenantApi({ platformName, version: packageVersion() })],
      },
      summary: { tenantGroup: names.tenantGroup },
    };
  },
};
