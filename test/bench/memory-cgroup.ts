// A memory cgroup for the benchmark's server, so it runs under the memory limit a Pod of the chart has.
// The limit matters beyond the OOM killer: Node sizes V8's heap from the cgroup's limit (at 512 MiB a
// heap limit of about 260 MB and a small young generation, against 4.5 GB on this 24 GB machine without
// one), and V8 collects accordingly. Without a limit the benchmark's RSS figures are those of a process
// that V8 believes may grow to gigabytes.
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const VALUES = fileURLToPath(new URL('../../charts/platform-apiserver/values.yaml', import.meta.url));
const ROOT = '/sys/fs/cgroup';

/** `resources.limits.memory` of the chart's values (e.g. 512Mi), in MiB. */
export function chartMemoryLimitMb(): number {
  const values = parse(readFileSync(VALUES, 'utf8')) as { resources?: { limits?: { memory?: string } } };
  const limit = values.resources?.limits?.memory ?? '';
  const match = /^(\d+)(Mi|Gi)$/.exec(limit);
  if (!match) throw new Error(`chart memory limit ${JSON.stringify(limit)}: expected <n>Mi or <n>Gi`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
}

interface MemoryCgroup {
  /** e.g. "512 MiB (cgroup v1)" */
  describe: string;
  /** The command that runs `argv` inside the cgroup. */
  wrap(argv: string[]): { command: string; args: string[] };
  /** How many processes the kernel's OOM killer ended in the cgroup. */
  oomKills(): number;
  /** Removes the cgroup; its processes must have exited. */
  remove(): void;
}

/**
 * Creates a memory cgroup of `limitMb` (cgroup v2, or the v1 memory controller), or says why it cannot
 * (not root, no memory controller): the benchmark then runs without a limit and prints the reason.
 */
function memoryCgroup(name: string, limitMb: number): MemoryCgroup | { unavailable: string } {
  const bytes = String(limitMb * 2 ** 20);
  const v1 = path.join(ROOT, 'memory');
  const v2Controllers = path.join(ROOT, 'cgroup.controllers');
  let dir: string;
  let version: 'v1' | 'v2';
  try {
    if (readable(path.join(v1, 'memory.limit_in_bytes'))) {
      dir = path.join(v1, name);
      version = 'v1';
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'memory.limit_in_bytes'), bytes);
    } else if (
      readable(v2Controllers) &&
      readFileSync(v2Controllers, 'utf8').split(/\s+/).includes('memory')
    ) {
      dir = path.join(ROOT, name);
      version = 'v2';
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'memory.max'), bytes);
    } else {
      return { unavailable: 'no cgroup memory controller' };
    }
  } catch (err) {
    return { unavailable: `cannot create a memory cgroup: ${String(err)}` };
  }
  const procs = path.join(dir, 'cgroup.procs');
  return {
    describe: `${limitMb} MiB (cgroup ${version})`,
    // The shell moves itself into the cgroup, then becomes the server: Node reads the limit at start.
    wrap: (argv) => ({ command: '/bin/sh', args: ['-c', 'echo $$ > "$0" && exec "$@"', procs, ...argv] }),
    oomKills: () => {
      try {
        const file = version === 'v1' ? 'memory.oom_control' : 'memory.events';
        const text = readFileSync(path.join(dir, file), 'utf8');
        return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? NaN);
      } catch {
        return NaN;
      }
    },
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        /* still in use, or gone already */
      }
    },
  };
}

function readable(file: string): boolean {
  try {
    readFileSync(file);
    return true;
  } catch {
    return false;
  }
}

export interface LimitedCommand {
  command: string;
  args: string[];
  /** e.g. "512 MiB (cgroup v1)", "none", or "none (why)". */
  memoryLimit: string;
  /** Why the limit could not be set, when it was asked for. */
  unavailable?: string;
  /** Once the process has exited: how many OOM kills its cgroup saw (0 without one); removes the cgroup. */
  release(): number;
}

/** `argv` to run under a memory limit of `limitMb` (0: none) in a cgroup called `name`, if one can be made. */
export function underMemoryLimit(name: string, limitMb: number, argv: string[]): LimitedCommand {
  const plain = { command: argv[0]!, args: argv.slice(1), memoryLimit: 'none', release: () => 0 };
  if (limitMb <= 0) return plain;
  const cgroup = memoryCgroup(name, limitMb);
  if ('unavailable' in cgroup)
    return { ...plain, memoryLimit: `none (${cgroup.unavailable})`, unavailable: cgroup.unavailable };
  return {
    ...cgroup.wrap(argv),
    memoryLimit: cgroup.describe,
    release: () => {
      const kills = cgroup.oomKills();
      cgroup.remove();
      return kills;
    },
  };
}
