import type { KubeConfig } from '@kubernetes/client-node';
import { installIamCrds, installOriginalRoleModel } from './iam-fixtures.ts';
import { installChartTenantCrds, installTenantCrds } from './tenant-fixtures.ts';

/** One of the two CRD sets the IAM API serves over, installed under a platform name of the test's own. */
export interface IamProfile {
  title: string;
  platform: string;
  /** The original's role model (GlobalRoles and the rest); false: our chart's CRDs alone. */
  original: boolean;
  install(platform: string): Promise<void>;
}

/**
 * Both profiles every IAM write test runs in: the original's CRDs (seed-shaped) and only our chart's.
 * Each file names its own two platforms, so files sharing one cluster never share CRDs.
 */
export function iamProfiles(kc: KubeConfig, platforms: { original: string; ours: string }): IamProfile[] {
  return [
    {
      title: "the original's CRDs (seed-shaped, this file's platform name)",
      platform: platforms.original,
      original: true,
      async install(platform) {
        await installOriginalRoleModel(kc, platform);
        await installTenantCrds(kc, platform);
      },
    },
    {
      title: 'only our CRDs',
      platform: platforms.ours,
      original: false,
      async install(platform) {
        await installIamCrds(kc, platform);
        await installChartTenantCrds(kc, platform);
      },
    },
  ];
}
