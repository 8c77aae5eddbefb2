import type { AuthConfig } from '../config/config.ts';

const NANOSECONDS_PER_SECOND = 1_000_000_000;

/**
 * The OAuth options a browser may see, in the original's shape (its `authentication.oauthOptions`,
 * durations as integer nanoseconds, Go's encoding of a duration). Built from a fixed list of fields,
 * never by copying the configuration, so no secret can slip in: no client secrets, no keys, and no
 * client ids either (the original lists its clients by name; no browser needs them).
 */
export interface PublicOAuthOptions {
  issuer: string;
  /** Identity providers a browser may be sent to. This server has password login only: always empty. */
  identityProviders: never[];
  accessTokenMaxAge: number;
  /** The original's refresh token lives maxAge + this; ours lives `refreshTokenMaxAgeSeconds`. */
  accessTokenInactivityTimeout: number;
}

export function publicOAuthOptions(
  auth: Pick<AuthConfig, 'issuer' | 'accessTokenMaxAgeSeconds' | 'refreshTokenMaxAgeSeconds'>,
  platformName: string,
): PublicOAuthOptions {
  return {
    issuer: auth.issuer || platformName,
    identityProviders: [],
    accessTokenMaxAge: auth.accessTokenMaxAgeSeconds * NANOSECONDS_PER_SECOND,
    accessTokenInactivityTimeout:
      Math.max(0, auth.refreshTokenMaxAgeSeconds - auth.accessTokenMaxAgeSeconds) * NANOSECONDS_PER_SECOND,
  };
}
