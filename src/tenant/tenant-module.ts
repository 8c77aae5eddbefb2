import { accessReviewerRef } from '../access/access-module.ts';
import type { FeatureModule } from '../http/feature-module.ts';
import { cacheMetricsRef, configRef, kubeConfigRef, loggerRef } from '../host-services.ts';
import { serviceRef } from '../kernel/module.ts';
import { oneReplicaRef, reconcileMetricsRef } from '../reconcile/reconcile-module.ts';
import { namespaceCacheRef } from '../resources/resources-module.ts';
import { packageVersion } from '../version.ts';
import { tenantApi } from './tenant-api.ts';
import { TenantCache, type NamespaceSource } from './tenant-cache.ts';
import { TenantReconciler } from './tenant-reconciler.ts';
import { tenantRoutes } from './tenant-routes.ts';
import { TenantStore, tenantNames } from './tenant-store.ts';
import { TenantWriter } from './tenant-writes.ts';
import { WorkspaceAccess } from './workspace-access.ts';
import { WorkspacePages } from './workspace-pages.ts';

/** Bounds each request to the kube-apiserver (a write, or the read a write checks first). */
const REQUEST_TIMEOUT_MS = 10_000;

/** What a caller may see of workspaces, for features that answer per workspace (monitoring's statistics). */
export const workspaceAccessRef = serviceRef<WorkspaceAccess>('workspace-access');

/** The original's tenant API (workspaces and their namespaces), as its console reads it. */
export const tenantModule: FeatureModule = {
  name: 'tenant',
  requires: [
    configRef,
    kubeConfigRef,
    loggerRef,
    cacheMetricsRef,
    accessReviewerRef,
    namespaceCacheRef,
    oneReplicaRef,
    reconcileMetricsRef,
  ],
  provides: [workspaceAccessRef],
  register(ctx) {
    const { platformName } = ctx.get(configRef);
    const names = tenantNames(platformName);
    const kubeConfig = ctx.get(kubeConfigRef);
    const store = new TenantStore({ kubeConfig, names, timeoutMs: REQUEST_TIMEOUT_MS });
    const cache = new TenantCache({
      kubeConfig,
      names,
      // The same objects: every namespace the kube-apiserver sends has metadata and a name.
      namespaces: ctx.get(namespaceCacheRef) as unknown as NamespaceSource,
      logger: ctx.get(loggerRef),
      metrics: ctx.get(cacheMetricsRef),
    });
    const access = new WorkspaceAccess({ store: cache, access: ctx.get(accessReviewerRef), names });
    ctx.provide(workspaceAccessRef, access);
    const pages = new WorkspacePages({ store: cache, access, names });
    const writer = new TenantWriter({ store, access: ctx.get(accessReviewerRef), names, platformName });
    // Workspaces and projects kept in step, by whichever replica leads (docs/reconcilers.md).
    const reconciler = new TenantReconciler({
      kubeConfig,
      names,
      logger: ctx.get(loggerRef),
      metrics: ctx.get(reconcileMetricsRef),
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    const runner = ctx.get(oneReplicaRef);
    let removeReconciler: (() => Promise<void>) | undefined;
    return {
      edge: {
        protectedRoutes: [tenantRoutes({ platformName, names, access, pages, writer })],
        openApi: [tenantApi({ platformName, version: packageVersion() })],
      },
      readiness: { 'tenant-cache': () => cache.ready },
      start: () => {
        cache.start();
        removeReconciler = runner.add(reconciler);
      },
      stop: async () => {
        await removeReconciler?.();
        await cache.stop();
      },
      summary: { tenantGroup: names.tenantGroup },
    };
  },
};
