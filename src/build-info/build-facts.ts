import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Where this server's code came from, in the fields the system we re-create reports at
 * `/kapis/version` (its Go ldflags become, here, a file written at build time).
 */
export interface BuildFacts {
  /** `v<major>.<minor>.<patch>…`: the nearest `v*` tag (git describe), else `v<package.json version>`. */
  gitVersion: string;
  /** Full commit hash, or `unknown`. */
  gitCommit: string;
  /** `clean`, `dirty`, or `unknown`. */
  gitTreeState: string;
  /** RFC 3339, UTC, second precision. */
  buildDate: string;
  /** What turned the TypeScript into what runs: `tsc <version>`, or Node's type stripping from source. */
  compiler: string;
}

export type RunCommand = (command: string, args: readonly string[]) => string | undefined;

/** Runs a command in `cwd`; undefined when it fails or is missing (no git in a build container). */
export function commandRunner(cwd: string): RunCommand {
  return (command, args) => {
    try {
      return execFileSync(command, args, {
        cwd,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 5000,
      }).trim();
    } catch {
      return undefined;
    }
  };
}

/** The version in package.json at `root`. */
export function packageJsonVersion(root: URL): string {
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * The build's facts from, in order: environment variables (`BUILD_GIT_VERSION`, `BUILD_GIT_COMMIT`,
 * `BUILD_GIT_TREE_STATE`, `BUILD_DATE` — an image build has no .git), git, then package.json.
 * `SOURCE_DATE_EPOCH` (reproducible builds) fixes the date when `BUILD_DATE` is not given.
 */
export function gatherBuildFacts(options: {
  env: NodeJS.ProcessEnv;
  run: RunCommand;
  packageVersion: string;
  compiler: string;
  now: Date;
}): BuildFacts {
  const { env, run } = options;
  const commit = env['BUILD_GIT_COMMIT'] || run('git', ['rev-parse', 'HEAD']);
  let treeState = env['BUILD_GIT_TREE_STATE'];
  if (!treeState && commit) {
    const status = run('git', ['status', '--porcelain', '--untracked-files=no']);
    if (status !== undefined) treeState = status === '' ? 'clean' : 'dirty';
  }
  const described = run('git', ['describe', '--tags', '--match', 'v[0-9]*', '--dirty']);
  const gitVersion =
    env['BUILD_GIT_VERSION'] ||
    (described && /^v\d+\.\d+/.test(described) ? described : undefined) ||
    `v${options.packageVersion}`;
  const epoch = Number(env['SOURCE_DATE_EPOCH']);
  const date =
    env['BUILD_DATE'] || (Number.isFinite(epoch) && epoch > 0 ? new Date(epoch * 1000) : options.now);
  return {
    gitVersion,
    gitCommit: commit || 'unknown',
    gitTreeState: treeState || 'unknown',
    buildDate: typeof date === 'string' ? date : date.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    compiler: options.compiler,
  };
}

/** Reads facts written at build time; undefined when there is no such file (running from source). */
export function readBuildFacts(file: URL): BuildFacts | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as BuildFacts;
  } catch {
    return undefined;
  }
}
