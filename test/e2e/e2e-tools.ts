import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';

// What the end-to-end tests use to reach the one-node cluster that test/e2e/run.sh starts: its kubectl
// and helm, its containerd (to find and kill a Pod's process on this host, or enter its network), and a
// steady request stream.

export const run = promisify(execFile);

/** A setting of the cluster, from the environment run.sh sets (E2E_* from the cluster's env file). */
export function env(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is set (run these tests with npm run test:e2e)`);
  return value;
}

export function makeKubectl(kubectlBin: string, kubeconfig: string) {
  return async (args: string[]): Promise<string> => {
    const { stdout } = await run(kubectlBin, [`--kubeconfig=${kubeconfig}`, ...args], {
      maxBuffer: 64 << 20,
    });
    return stdout;
  };
}

/** Polls `check` until it returns a value, or fails naming `what` after `seconds`. */
export async function waitFor<T>(
  what: string,
  seconds: number,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      assert.fail(`timed out after ${seconds}s waiting for ${what}: ${String(last)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The host PID of a running container (containerd's task), from its CRI container ID. */
export async function containerPid(containerdSocket: string, containerId: string): Promise<number> {
  const id = containerId.replace(/^containerd:\/\//, '');
  const { stdout } = await run('ctr', [
    '--address',
    containerdSocket,
    '--namespace',
    'k8s.io',
    'tasks',
    'ls',
  ]);
  const line = stdout.split('\n').find((l) => l.startsWith(`${id} `));
  assert.ok(line, `containerd runs a task for container ${id}`);
  const pid = Number(line.trim().split(/\s+/)[1]);
  assert.ok(pid > 1, `a PID for ${id}: ${line}`);
  return pid;
}

// Connects, prints how it went (`connected`, an error code such as ECONNREFUSED, or `timeout`), exits.
const CONNECT_SCRIPT = `
const [host, port, ms] = process.argv.slice(1);
const socket = require('node:net').connect(Number(port), host);
const done = (how) => { console.log(how); process.exit(0); };
socket.setTimeout(Number(ms), () => done('timeout'));
socket.on('connect', () => done('connected'));
socket.on('error', (err) => done(err.code ?? String(err)));
`;

/**
 * Opens a TCP connection to host:port from inside the network namespace of the process `pid` (a Pod's:
 * its address, its routes, so the node's firewall sees the Pod's traffic), with this host's node as the
 * client; how it went: `connected`, an error code, or `timeout` after `timeoutMs`.
 */
export async function connectFrom(
  pid: number,
  host: string,
  port: number,
  timeoutMs = 3000,
): Promise<string> {
  const { stdout } = await run('nsenter', [
    `--target=${pid}`,
    '--net',
    '--',
    process.execPath,
    '-e',
    CONNECT_SCRIPT,
    host,
    String(port),
    String(timeoutMs),
  ]);
  return stdout.trim();
}

/**
 * A Pod that accepts TCP connections on `ports` and closes them: node from `image` (no other image is on
 * the node) with a one-line server. It runs as the image's non-root user; ports below 1024 open because
 * the Pod lowers its own unprivileged-port bound (a namespaced sysctl the kubelet allows by default).
 */
export function listenerPod(
  name: string,
  namespace: string,
  image: string,
  ports: number[],
  labels: Record<string, string>,
): object {
  const script =
    "process.on('SIGTERM', () => process.exit(0));" +
    "for (const port of process.argv.slice(1)) require('node:net').createServer((s) => s.end()).listen(Number(port));";
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: {
      securityContext: { sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }] },
      containers: [
        {
          name: 'listen',
          image,
          imagePullPolicy: 'Never',
          command: ['/usr/local/bin/node', '-e', script, ...ports.map(String)],
          ports: ports.map((containerPort) => ({ containerPort })),
          readinessProbe: { tcpSocket: { port: ports[0] }, periodSeconds: 1 },
        },
      ],
    },
  };
}

/** A process's environment as this host sees it (/proc/<pid>/environ). */
export function processEnvironment(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

export interface StreamResult {
  ok: number;
  /** One line per failed request: its status and body, or the network error. */
  failures: string[];
}

/**
 * `workers` loops each sending `send()` back to back until stopped; a request fails when it does not
 * answer 200 within `timeoutMs` (an error, a timeout or another status).
 */
export function streamRequests(
  send: (signal: AbortSignal) => Promise<Response>,
  options: { workers: number; timeoutMs: number },
): { stop: () => Promise<StreamResult> } {
  const result: StreamResult = { ok: 0, failures: [] };
  let stopped = false;
  const worker = async () => {
    while (!stopped) {
      const started = Date.now();
      try {
        const res = await send(AbortSignal.timeout(options.timeoutMs));
        const body = await res.text();
        if (res.status === 200) result.ok++;
        else result.failures.push(`${new Date(started).toISOString()} ${res.status} ${body.slice(0, 200)}`);
      } catch (err) {
        result.failures.push(`${new Date(started).toISOString()} ${String(err)}`);
      }
    }
  };
  const workers = Array.from({ length: options.workers }, worker);
  return {
    stop: async () => {
      stopped = true;
      await Promise.all(workers);
      return result;
    },
  };
}

/** Millicores of a CPU quantity as the chart writes them (`100m`, `1`). */
export function cpuMilli(quantity: string): number {
  const m = /^(\d+)(m?)$/.exec(quantity);
  assert.ok(m, `a CPU quantity: ${quantity}`);
  return m[2] ? Number(m[1]) : Number(m[1]) * 1000;
}

const BINARY: Record<string, number> = { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** Bytes of a memory quantity as the chart writes them (`128Mi`, `1Gi`). */
export function memoryBytes(quantity: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  assert.ok(m, `a memory quantity: ${quantity}`);
  return Number(m[1]) * BINARY[m[2] ?? '']!;
}
