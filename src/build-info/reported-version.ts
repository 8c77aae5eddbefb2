import { majorMinor, type ServerVersion } from './server-version.ts';

/** This server's own build, beside whatever release the body's version fields name. */
export interface OwnBuild {
  version: string;
  gitCommit: string;
  buildDate: string;
}

/** The body of `/kapis/version` without its `kubernetes` member. */
export interface ReportedVersion extends ServerVersion {
  platformApiserver: OwnBuild;
}

/** The platform name under which the original's clients (its console) talk to this server. */
export const ORIGINAL_PLATFORM_NAME = 'kubesphere';

/**
 * What `/kapis/version` reports. Under the original's platform name its clients choose paths and features
 * by `gitVersion` (the console asks for v1alpha2 workspaces at ≤ 3.2), so there the version fields name the
 * original's release whose API we implement — as servers implementing another product's API report that
 * API's version. The build facts (commit, tree state, date, runtime) stay ours, and our own version is
 * always in `platformApiserver`.
 */
export function reportedVersion(
  own: ServerVersion,
  profile: { platformName: string; compatibleRelease: string },
): ReportedVersion {
  const platformApiserver = { version: own.gitVersion, gitCommit: own.gitCommit, buildDate: own.buildDate };
  if (profile.platformName !== ORIGINAL_PLATFORM_NAME) return { ...own, platformApiserver };
  const { major, minor } = majorMinor(profile.compatibleRelease);
  return {
    ...own,
    gitVersion: profile.compatibleRelease,
    gitMajor: major,
    gitMinor: minor,
    platformApiserver,
  };
}
