import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { StopWaiting, waitFor } from '../cluster/wait-for.ts';

/** A running single-node OpenSearch on loopback, started by this harness. */
export interface OpenSearchNode {
  /** http://127.0.0.1:<port> */
  url: string;
  version: string;
  /** PID of the JVM (the node's own process group leader). */
  pid: number;
  /** Temp dir with the unpacked distribution, config, data and logs; removed by stop(). */
  dir: string;
  /** Terminates the node (SIGTERM, then SIGKILL after a deadline) and removes its dir. */
  stop(): Promise<void>;
}

export interface OpenSearchOptions {
  /** Deadline for the node to answer cluster health yellow. */
  startTimeoutMs?: number;
  /** JVM heap; a few thousand test documents need far less than the default 1 GiB. */
  heapMb?: number;
}

interface Installed {
  version: string;
  zip: string;
  javaHome: string;
  uid: number;
  gid: number;
}

const installScript = fileURLToPath(new URL('./install-opensearch.sh', import.meta.url));

/** Runs the install script (downloads once, then cached) and returns what it prints. Throws on failure. */
export function installOpenSearch(): Installed {
  let out: string;
  try {
    out = execFileSync('bash', [installScript, '--print-paths'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (err) {
    throw new Error(`cannot install the test log store (${installScript}): ${(err as Error).message}`, {
      cause: err,
    });
  }
  const v = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  ) as Record<string, string | undefined>;
  const { OPENSEARCH_VERSION, OPENSEARCH_ZIP, JAVA_HOME, RUN_UID, RUN_GID } = v;
  if (!OPENSEARCH_VERSION || !OPENSEARCH_ZIP || !JAVA_HOME || !RUN_UID || !RUN_GID)
    throw new Error(`unexpected output of ${installScript}: ${out}`);
  return {
    version: OPENSEARCH_VERSION,
    zip: OPENSEARCH_ZIP,
    javaHome: JAVA_HOME,
    uid: Number(RUN_UID),
    gid: Number(RUN_GID),
  };
}

const running = new Set<ChildProcess>();
// Last line of defence against a stray JVM when a test process dies without calling stop().
process.once('exit', () => {
  for (const child of running) signalGroup(child, 'SIGKILL');
});

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

/**
 * The distribution's jvm.options with the heap set and every path that is relative to the
 * distribution's home (GC log, heap dumps, JVM error files) moved into the node's own dirs.
 */
function jvmOptions(original: string, heapMb: number, dir: string): string {
  return original
    .split('\n')
    .map((line) => {
      if (/^-Xm[sx]\d/.test(line)) return `${line.slice(0, 4)}${heapMb}m`;
      return line
        .replace('file=logs/gc.log', `file=${dir}/logs/gc.log`)
        .replace('-Xloggc:logs/gc.log', `-Xloggc:${dir}/logs/gc.log`)
        .replace('-XX:HeapDumpPath=data', `-XX:HeapDumpPath=${dir}/data`)
        .replace('-XX:ErrorFile=logs/', `-XX:ErrorFile=${dir}/logs/`);
    })
    .join('\n');
}

/**
 * Starts a real OpenSearch node: unpacks the cached distribution into a private temp dir, writes a
 * single-node loopback config (kernel-picked ports, read back from the node's ports file), starts it
 * as an unprivileged user when we are root, and waits for cluster health yellow within a deadline.
 * Fails (never skips) with the node's last output when it cannot start.
 */
export async function startOpenSearch(options: OpenSearchOptions = {}): Promise<OpenSearchNode> {
  const installed = installOpenSearch();
  const timeoutMs = options.startTimeoutMs ?? 120_000;
  const heapMb = options.heapMb ?? 512;
  const base = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const dir = mkdtempSync(path.join(base, 'platform-logstore-'));
  let child: ChildProcess | undefined;

  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
      signalGroup(child, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(child!, 'SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    execFileSync('unzip', ['-q', installed.zip, '-d', dir]);
    const home = path.join(dir, `opensearch-${installed.version}`);
    const conf = path.join(dir, 'config');
    execFileSync('cp', ['-r', path.join(home, 'config'), conf]);
    for (const sub of ['data', 'logs', 'tmp']) execFileSync('mkdir', ['-p', path.join(dir, sub)]);
    writeFileSync(
      path.join(conf, 'jvm.options'),
      jvmOptions(readFileSync(path.join(conf, 'jvm.options'), 'utf8'), heapMb, dir),
    );
    writeFileSync(
      path.join(conf, 'opensearch.yml'),
      [
        'cluster.name: platform-test',
        'node.name: logstore',
        'discovery.type: single-node',
        'network.host: 127.0.0.1',
        // Kernel-picked ports, written by the node into path.logs/http.ports: no race for a free port.
        'http.port: 0',
        'transport.port: 0',
        'node.portsfile: true',
        `path.data: ${dir}/data`,
        `path.logs: ${dir}/logs`,
        // A nearly full disk would otherwise turn the test indices read-only.
        'cluster.routing.allocation.disk.threshold_enabled: false',
        'indices.breaker.total.use_real_memory: false',
        'action.auto_create_index: true',
        // Tests clean up their own indices with a wildcard (`<prefix>-*`).
        'action.destructive_requires_name: false',
        '',
      ].join('\n'),
    );
    execFileSync('chown', ['-R', `${installed.uid}:${installed.gid}`, dir]);

    const outputPath = path.join(dir, 'output.log');
    const output = createWriteStream(outputPath);
    // detached: its own process group, so stop() reaches the JVM and anything it forked.
    child = spawn(path.join(home, 'bin', 'opensearch'), [], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      uid: installed.uid,
      gid: installed.gid,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: dir,
        JAVA_HOME: installed.javaHome,
        OPENSEARCH_PATH_CONF: conf,
        OPENSEARCH_TMPDIR: path.join(dir, 'tmp'),
        // The CI run's mark (.ci/run), so that run can tell its own leftover JVM from another's.
        ...(process.env['PLATFORM_RUN_ID'] ? { PLATFORM_RUN_ID: process.env['PLATFORM_RUN_ID'] } : {}),
      },
    });
    const node = child;
    node.stdout?.pipe(output);
    node.stderr?.pipe(output);
    // The node must not keep a test process alive by itself: its owner stops it (stop(), or on
    // 'beforeExit' for a file's private one, which needs the loop to be able to go idle).
    node.unref();
    (node.stdout as Socket | null)?.unref();
    (node.stderr as Socket | null)?.unref();
    running.add(node);
    node.once('exit', () => running.delete(node));
    node.once('error', (err) => output.write(`\nspawn error: ${err.message}\n`));

    const portsFile = path.join(dir, 'logs', 'http.ports');
    const url = await waitFor(
      'OpenSearch cluster health yellow',
      async () => {
        if (node.exitCode !== null || node.signalCode !== null)
          throw new StopWaiting(
            `OpenSearch exited (${node.exitCode ?? node.signalCode}) before it was ready`,
          );
        if (!existsSync(portsFile)) return undefined;
        const address = readFileSync(portsFile, 'utf8').trim().split('\n')[0];
        if (!address) return undefined;
        const candidate = `http://${address}`;
        const res = await fetch(`${candidate}/_cluster/health?wait_for_status=yellow&timeout=5s`, {
          signal: AbortSignal.timeout(10_000),
        });
        return res.status === 200 ? candidate : undefined;
      },
      { timeoutMs, intervalMs: 250 },
    ).catch((err: Error) => {
      const logs = path.join(dir, 'logs');
      const serverLog = existsSync(logs)
        ? readdirSync(logs)
            .filter((f) => f.endsWith('.log') && !f.startsWith('gc'))
            .map((f) => `--- ${f}\n${tail(path.join(logs, f))}`)
            .join('\n')
        : '';
      throw new Error(`${err.message}\nOpenSearch output:\n${tail(outputPath)}\n${serverLog}`);
    });

    return { url, version: installed.version, pid: node.pid!, dir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
