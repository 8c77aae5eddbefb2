import type { FeatureModule } from '../http/feature-module.ts';
import { kubeConfigRef, loggerRef } from '../host-services.ts';
import { KubeVersionSource } from './kube-version.ts';
import { serverVersion } from './server-version.ts';
import { versionApi } from './version-api.ts';
import { versionRoutes } from './version-routes.ts';

/** `/kapis/version`: what this server was built from, and the kube-apiserver's version. */
export const versionModule: FeatureModule = {
  name: 'build-info',
  requires: [kubeConfigRef, loggerRef],
  register(ctx) {
    const version = serverVersion();
    const kube = new KubeVersionSource({ kubeConfig: ctx.get(kubeConfigRef), logger: ctx.get(loggerRef) });
    return {
      edge: { publicRoutes: [versionRoutes(version, kube)], openApi: [versionApi()] },
      summary: { version: version.gitVersion, commit: version.gitCommit },
    };
  },
};
