import type { FeatureModule } from '../http/feature-module.ts';
import { configRef } from '../host-services.ts';
import { configApi } from './config-api.ts';
import { configRoutes } from './config-routes.ts';
import { featureFlags } from './feature-flags.ts';
import { publicOAuthOptions } from './oauth-options.ts';

/** The original's public configuration: which components are served, the OAuth options, GPU kinds. */
export const platformConfigModule: FeatureModule = {
  name: 'platform-config',
  requires: [configRef],
  register(ctx) {
    const config = ctx.get(configRef);
    return {
      edge: {
        publicRoutes: [
          configRoutes({
            platformName: config.platformName,
            features: featureFlags(config),
            oauth: publicOAuthOptions(config.auth, config.platformName),
          }),
        ],
        openApi: [configApi({ platformName: config.platformName })],
      },
    };
  },
};
