import type { FeatureModule } from '../http/feature-module.ts';
import { configRef, kubeConfigRef, loggerRef } from '../host-services.ts';
import { KubeVersionSource } from './kube-version.ts';
import { reportedVersion } from './reported-version.ts';
import { serverVersion } from './server-version.ts';
import { versionApi } from './version-api.ts';
import { versionRoutes } from './version-routes.ts';

/**
 * `/kapis/version`: what this server was built from (or, under the original's platform name, the
 * original's release whose API it implements), and the kube-apiserver's version.
 */
export const versionModule: FeatureModule = {
  name: 'build-info',
  requires: [configRef, kubeConfigRef, loggerRef],
  register(ctx) {
    const version = serverVersion();
    const { platformName, compatibleRelease } = ctx.get(configRef);
    const reported = reportedVersion(version, { platformName, compatibleRelease });
    const kube = new KubeVersionSource({ kubeConfig: ctx.get(kubeConfigRef), logger: ctx.get(loggerRef) });
    return {
      edge: { publicRoutes: [versionRoutes(reported, kube)], openApi: [versionApi()] },
      summary: {
        version: version.gitVersion,
        commit: version.gitCommit,
        reportedVersion: reported.gitVersion,
      },
    };
  },
};
