// `npm run demo`: a real local control plane (etcd + kube-apiserver) with demo nodes, and the server
// running against it until Ctrl-C. Extra arguments are passed to the server (e.g. --http.port=8080).
// A start-up failure prints one line (`demo: could not ...: <why>`), stops what was started and exits 1.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiextensionsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../test/cluster/control-plane.ts';
import { waitForCrdsEstablished } from '../test/cluster/crds.ts';
import { errorLine } from '../test/cluster/error-line.ts';
import { createNodes } from '../test/cluster/node-fixtures.ts';
import { StopWaiting, waitFor } from '../test/cluster/wait-for.ts';

const DEMO_NODES = 12;
const serverArgs = process.argv.slice(2);
const port = serverArgs.find((a) => a.startsWith('--http.port='))?.split('=')[1] ?? '9090';

const say = (line = '') => process.stdout.write(`${line}\n`);

let cp: ControlPlane | undefined;
let server: ChildProcess | undefined;
let ready = false;
let interrupted = false;
let stopping = false;

// The server's count of cached users (docs/metrics.md); in the demo's fresh cluster, the one is admin.
const ADMIN_CACHED = /^platform_cache_objects\{kind="users\.iam\.platform\.io"\} [1-9]/m;

const get = async (target: string) => {
  const res = await fetch(target, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
  return res && { status: res.status, body: await res.text().catch(() => '') };
};

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** Stops what the demo started (the server, then the control plane), says `last` and exits with `code`. */
async function stop(code: number, last = 'demo: stopped; control plane removed.'): Promise<never> {
  if (!stopping) {
    stopping = true;
    if (server && running(server)) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      // The server drains within its own grace period (--http.shutdownGraceSeconds).
      server.kill('SIGTERM');
      await exited;
    }
    await cp?.stop();
    say(last);
    process.exit(code);
  }
  return new Promise<never>(() => {}); // the first call exits
}

/** Runs one start-up step; if it fails, stops what was started and exits with one line saying why. */
async function step<T>(what: string, run: () => Promise<T> | T): Promise<T> {
  let value: T;
  try {
    value = await run();
  } catch (err) {
    return interrupted ? stop(0) : stop(1, `demo: could not ${what}: ${errorLine(err)}`);
  }
  // Ctrl-C during start-up takes effect between steps, so that what a step started is stopped too.
  if (interrupted) return stop(0);
  return value;
}

// Idempotent: under `npm run demo` one Ctrl-C arrives twice (from the terminal, and forwarded by npm).
const onSignal = () => {
  interrupted = true;
  if (ready) void stop(0);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
// Last line of defence, as control-plane.ts has for its processes: the server never outlives the demo.
process.once('exit', () => {
  if (server && running(server)) server.kill('SIGKILL');
});

say('demo: starting a local control plane (etcd + kube-apiserver)...');
const controlPlane = await step('start the control plane', async () => (cp = await startControlPlane()));
const kc = new KubeConfig();
kc.loadFromFile(controlPlane.kubeconfigPath);
await step('create the demo nodes', () =>
  createNodes(kc.makeApiClient(CoreV1Api), DEMO_NODES, { prefix: 'demo' }),
);
say(
  `demo: kube-apiserver ${controlPlane.server} with ${DEMO_NODES} demo nodes (kubeconfig: ${controlPlane.kubeconfigPath})`,
);

// The server keeps users and sessions as custom resources: install the chart's CRDs, as Helm would.
const crds = fileURLToPath(new URL('../charts/platform-apiserver/files/crds/', import.meta.url));
const kubectl = (...args: string[]) =>
  execFileSync(controlPlane.binaries.kubectl, ['--kubeconfig', controlPlane.kubeconfigPath, ...args], {
    encoding: 'utf8',
    stdio: 'pipe',
  });
await step('install the CRDs', async () => {
  // e.g. customresourcedefinition.apiextensions.k8s.io/users.iam.platform.io
  const names = kubectl('apply', '-o', 'name', '-f', crds)
    .split('\n')
    .filter((line) => line.startsWith('customresourcedefinition'))
    .map((line) => line.slice(line.indexOf('/') + 1));
  const api = kc.makeApiClient(ApiextensionsV1Api);
  await waitForCrdsEstablished(names, (name) => api.readCustomResourceDefinition({ name }), {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
});

// A first administrator with a random password, kept in a 0600 file inside the control plane's temp dir
// (removed with it); the server creates the User at start.
const passwordFile = path.join(controlPlane.dir, 'admin-password');
const url = `http://127.0.0.1:${port}`;
await step('start the server', async () => {
  const entry = fileURLToPath(new URL('../dist/main.js', import.meta.url));
  if (!existsSync(entry)) throw new Error(`${entry} is missing: build it with \`npm run build\``);
  writeFileSync(passwordFile, randomBytes(12).toString('base64url'), { mode: 0o600 });
  // Its own process group: Ctrl-C reaches the demo only, which stops the server once, gracefully.
  const child = spawn(
    process.execPath,
    [
      entry,
      `--kubernetes.kubeconfig=${controlPlane.kubeconfigPath}`,
      `--http.port=${port}`,
      '--auth.bootstrapAdmin.username=admin',
      `--auth.bootstrapAdmin.passwordFile=${passwordFile}`,
      '--auth.bootstrapAdmin.groups=system:masters',
      ...serverArgs,
    ],
    { detached: true, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  server = child;
  // Ready, and its users cache holds the administrator it creates at start (a moment after it is
  // ready): only then does the printed token command work.
  await waitFor(
    'the server to become ready and know its administrator',
    async () => {
      if (interrupted) throw new StopWaiting('interrupted');
      if (!running(child))
        throw new StopWaiting(`it exited (${child.exitCode ?? child.signalCode}) before it was ready`);
      const readyz = await get(`${url}/readyz`);
      return readyz?.status === 200 && ADMIN_CACHED.test((await get(`${url}/metrics`))?.body ?? '')
        ? true
        : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  ready = true;
  child.once('exit', (code) => void stop(code ?? 1));
  if (!running(child)) void stop(child.exitCode ?? 1);
});

say();
say(`demo: platform-apiserver on ${url}  (Ctrl-C stops everything)`);
say('  # a token for the demo administrator (user admin, group system:masters):');
say(`  TOKEN=$(curl -s ${url}/oauth/token -d grant_type=password -d username=admin \\`);
say(
  `      --data-urlencode password@${passwordFile} -d client_id=platform -d client_secret=platform | node -pe 'JSON.parse(fs.readFileSync(0)).access_token')`,
);
say(
  `  curl -s -H "Authorization: Bearer $TOKEN" '${url}/kapis/resources.platform.io/v1alpha3/nodes?limit=3&sortBy=name&ascending=true'`,
);
say(
  `  curl -s -H "Authorization: Bearer $TOKEN" ${url}/api/v1/nodes   # the Kubernetes API, proxied as admin`,
);
say(`  curl -s ${url}/metrics | head; curl -s ${url}/openapi/platform/v3 | head -c 300`);
// The pinned kubectl the demo used: a newcomer's machine need not have one on PATH.
say(
  `  ${controlPlane.binaries.kubectl} --kubeconfig ${controlPlane.kubeconfigPath} get nodes   # the same nodes, straight from the kube-apiserver`,
);
say();
