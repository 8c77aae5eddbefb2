import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import type { Socket } from 'node:net';
import path from 'node:path';
import { controlPlaneBinaries, type ControlPlaneBinaries } from './binaries.ts';
import { freePort } from './free-port.ts';
import { StopWaiting, waitFor } from './wait-for.ts';

/** A static-token identity known to the kube-apiserver. */
export interface TestIdentity {
  name: string;
  token: string;
  groups: string[];
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  server: string;
  /** PEM of the CA that signed the apiserver's serving certificate. */
  caPem: string;
  /** Path of a kubeconfig with contexts `admin`, `alice`, `bob` (current: admin). */
  kubeconfigPath: string;
  /** Member of system:masters. */
  admin: TestIdentity;
  /** Unprivileged identities: no RBAC bindings unless a test creates them. */
  users: { alice: TestIdentity; bob: TestIdentity };
  binaries: ControlPlaneBinaries;
  /** The temp dir holding data, certs and logs; removed by stop(). */
  dir: string;
  /** PIDs of etcd and kube-apiserver, for tests of teardown. */
  pids: number[];
  /** http://127.0.0.1:<port> of etcd's client API (its JSON gateway too), for tests that compact it. */
  etcdUrl: string;
  /** Stops the kube-apiserver only (etcd keeps the data), to test behaviour during an outage. */
  stopApiserver(): Promise<void>;
  /** Starts it again on the same address with the same state; resolves when it is ready. */
  startApiserver(): Promise<void>;
  /** Stops both and removes the temp dir; `keepEtcdDataIn` first moves etcd's data dir there (cleanly shut down). */
  stop(options?: { keepEtcdDataIn?: string }): Promise<void>;
}

export interface ControlPlaneOptions {
  /** Deadline for etcd and kube-apiserver to become ready. */
  startTimeoutMs?: number;
  /** Extra kube-apiserver flags. */
  apiserverArgs?: string[];
  /** Extra environment of the kube-apiserver (e.g. GOGC), on top of this process's. */
  apiserverEnv?: Record<string, string>;
  /**
   * Start etcd from a copy of this data dir (one a previous `stop({ keepEtcdDataIn })` kept), so a
   * benchmark's seeded cluster is reused. The copy becomes a new one-member cluster on the new ports.
   */
  etcdDataFrom?: string;
}

const running = new Set<ChildProcess>();
// Last line of defence against stray processes when a test process dies without calling stop().
process.once('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

function startProcess(
  name: string,
  binary: string,
  args: string[],
  logPath: string,
  env?: Record<string, string>,
): ChildProcess {
  const log = createWriteStream(logPath);
  // Own process group, so teardown kills anything the binary forked.
  const child = spawn(binary, args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  // The control plane must not keep a test process alive by itself: its owner stops it (stop(), or
  // on 'beforeExit' for a file's private one, which needs the loop to be able to go idle).
  child.unref();
  (child.stdout as Socket | null)?.unref();
  (child.stderr as Socket | null)?.unref();
  running.add(child);
  child.once('exit', () => running.delete(child));
  child.once('error', (err) => log.write(`\n${name}: spawn error: ${err.message}\n`));
  return child;
}

async function stopProcess(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}

function tail(file: string, lines = 25): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

function exitedEarly(name: string, child: ChildProcess, logPath: string): Error | undefined {
  if (child.exitCode === null && child.signalCode === null) return undefined;
  return new StopWaiting(
    `${name} exited (${child.exitCode ?? child.signalCode}) before it was ready; last output:\n${tail(logPath)}`,
  );
}

function get(url: string, options: https.RequestOptions = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const lib = url.startsWith('https:') ? https : http;
    const req = lib.get(url, { ...options, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** A kubeconfig whose users authenticate with bearer tokens; `current` names the current context. */
export function kubeconfigYaml(
  server: string,
  caPem: string,
  users: Pick<TestIdentity, 'name' | 'token'>[],
  current: string,
): string {
  const ca = Buffer.from(caPem).toString('base64');
  const lines = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: local',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    ...users.flatMap((u) => [`- name: ${u.name}`, '  user:', `    token: ${u.token}`]),
    'contexts:',
    ...users.flatMap((u) => [`- name: ${u.name}`, '  context:', '    cluster: local', `    user: ${u.name}`]),
    `current-context: ${current}`,
  ];
  return lines.join('\n') + '\n';
}

/**
 * Starts a real etcd and kube-apiserver on free loopback ports, with RBAC, static-token identities
 * and service-account signing keys. Everything lives in one temp dir that stop() removes.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const binaries = controlPlaneBinaries();
  const timeoutMs = options.startTimeoutMs ?? 90_000;
  const shm = '/dev/shm';
  const base = existsSync(shm) ? shm : os.tmpdir();
  const dir = mkdtempSync(path.join(base, 'platform-cp-'));
  const children: ChildProcess[] = [];

  const etcdDataDir = path.join(dir, 'etcd');
  const stop = async (stopOptions: { keepEtcdDataIn?: string } = {}) => {
    for (const child of children.reverse()) await stopProcess(child);
    if (stopOptions.keepEtcdDataIn) {
      // Within one filesystem a rename; /dev/shm to disk needs a copy.
      try {
        renameSync(etcdDataDir, stopOptions.keepEtcdDataIn);
      } catch {
        cpSync(etcdDataDir, stopOptions.keepEtcdDataIn, { recursive: true });
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const [etcdClientPort, etcdPeerPort, apiPort] = [await freePort(), await freePort(), await freePort()];

    const etcdLog = path.join(dir, 'etcd.log');
    if (options.etcdDataFrom) cpSync(options.etcdDataFrom, etcdDataDir, { recursive: true });
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const peerUrl = `http://127.0.0.1:${etcdPeerPort}`;
    const etcd = startProcess(
      'etcd',
      binaries.etcd,
      [
        '--name=test',
        `--data-dir=${etcdDataDir}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=test=${peerUrl}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
        // The copied member's stored peer address is the old port: make it a one-member cluster here.
        ...(options.etcdDataFrom ? ['--force-new-cluster'] : []),
      ],
      etcdLog,
    );
    children.push(etcd);
    await waitFor(
      'etcd /health',
      async () => {
        const early = exitedEarly('etcd', etcd, etcdLog);
        if (early) throw early;
        const res = await get(`${etcdUrl}/health`);
        return res.status === 200 && res.body.includes('"health":"true"') ? true : undefined;
      },
      { timeoutMs, intervalMs: 100 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\netcd output:\n${tail(etcdLog)}`);
    });

    const token = () => randomBytes(24).toString('hex');
    const admin: TestIdentity = { name: 'admin', token: token(), groups: ['system:masters'] };
    const alice: TestIdentity = { name: 'alice', token: token(), groups: ['developers'] };
    const bob: TestIdentity = { name: 'bob', token: token(), groups: ['viewers'] };
    const identities = [admin, alice, bob];
    const tokensCsv = path.join(dir, 'tokens.csv');
    writeFileSync(
      tokensCsv,
      identities.map((u, i) => `${u.token},${u.name},uid-${i},"${u.groups.join(',')}"`).join('\n') + '\n',
      { mode: 0o600 },
    );

    const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const saKey = path.join(dir, 'sa.key');
    const saPub = path.join(dir, 'sa.pub');
    writeFileSync(saKey, sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(saPub, sa.publicKey.export({ type: 'spki', format: 'pem' }));

    const certDir = path.join(dir, 'certs');
    const apiLog = path.join(dir, 'kube-apiserver.log');
    const server = `https://127.0.0.1:${apiPort}`;
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--cert-dir=${certDir}`,
      '--endpoint-reconciler-type=none',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${saPub}`,
      `--service-account-signing-key-file=${saKey}`,
      `--token-auth-file=${tokensCsv}`,
      '--authorization-mode=RBAC',
      '--disable-admission-plugins=ServiceAccount,TaintNodesByCondition',
      '--allow-privileged=true',
      '--profiling=false',
      '--v=1',
      ...(options.apiserverArgs ?? []),
    ];
    const caFile = path.join(certDir, 'apiserver.crt');
    let apiserver: ChildProcess | undefined;
    const startApiserver = async () => {
      const child = startProcess(
        'kube-apiserver',
        binaries.kubeApiserver,
        apiserverArgs,
        apiLog,
        options.apiserverEnv,
      );
      apiserver = child;
      children.push(child);
      await waitFor(
        'kube-apiserver /readyz',
        async () => {
          const early = exitedEarly('kube-apiserver', child, apiLog);
          if (early) throw early;
          if (!existsSync(caFile)) return undefined;
          const res = await get(`${server}/readyz`, {
            ca: readFileSync(caFile),
            headers: { Authorization: `Bearer ${admin.token}` },
          });
          return res.status === 200 ? true : undefined;
        },
        { timeoutMs, intervalMs: 200 },
      ).catch((err: Error) => {
        throw new Error(`${err.message}\nkube-apiserver output:\n${tail(apiLog)}`);
      });
    };
    const stopApiserver = async () => {
      if (apiserver) await stopProcess(apiserver);
    };
    await startApiserver();

    // The self-signed serving cert file holds the leaf and the CA that signed it; clients trust the whole file.
    const caPem = readFileSync(caFile, 'utf8');
    const kubeconfigPath = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfigYaml(server, caPem, identities, 'admin'), { mode: 0o600 });

    return {
      server,
      caPem,
      kubeconfigPath,
      admin,
      users: { alice, bob },
      binaries,
      dir,
      pids: children.map((c) => c.pid!),
      etcdUrl,
      stopApiserver,
      startApiserver,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
