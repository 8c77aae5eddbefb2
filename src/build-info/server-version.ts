import { fileURLToPath } from 'node:url';
import {
  commandRunner,
  gatherBuildFacts,
  packageJsonVersion,
  readBuildFacts,
  type BuildFacts,
} from './build-facts.ts';

/** The body of `/kapis/version` without its `kubernetes` member, in the original's field order. */
export interface ServerVersion extends BuildFacts {
  gitMajor: string;
  gitMinor: string;
  /** Node.js running the server (the original reports goVersion). */
  nodeVersion: string;
  /** `<os>/<arch>` in Go's spelling, as the original reports it (`linux/amd64`). */
  platform: string;
}

const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm: 'arm', arm64: 'arm64' };

/**
 * This server's version: the facts `npm run build` wrote beside the compiled code, or — running from
 * source — the same facts gathered now from git and package.json.
 */
export function serverVersion(env: NodeJS.ProcessEnv = process.env): ServerVersion {
  const root = new URL('../../', import.meta.url);
  const facts =
    readBuildFacts(new URL('../build-info.json', import.meta.url)) ??
    gatherBuildFacts({
      env,
      run: commandRunner(fileURLToPath(root)),
      packageVersion: packageJsonVersion(root),
      compiler: 'node (type stripping, from source)',
      now: new Date(),
    });
  const { major, minor } = majorMinor(facts.gitVersion);
  return {
    gitVersion: facts.gitVersion,
    gitMajor: major,
    gitMinor: minor,
    gitCommit: facts.gitCommit,
    gitTreeState: facts.gitTreeState,
    buildDate: facts.buildDate,
    nodeVersion: process.version,
    compiler: facts.compiler,
    platform: `${process.platform}/${GO_ARCH[process.arch] ?? process.arch}`,
  };
}

/** The first two numbers of `v<major>.<minor>…`, as strings; empty when there are none. */
export function majorMinor(version: string): { major: string; minor: string } {
  const [, major = '', minor = ''] = /^v?(\d+)\.(\d+)/.exec(version) ?? [];
  return { major, minor };
}
