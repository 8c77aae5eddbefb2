// `npm run demo`: a real local control plane (etcd + kube-apiserver) with demo nodes, and the server
// running against it until Ctrl-C. Extra arguments are passed to the server (e.g. --http.port=8080).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '../test/cluster/control-plane.ts';
import { createNodes } from '../test/cluster/node-fixtures.ts';
import { waitFor } from '../test/cluster/wait-for.ts';

const DEMO_NODES = 12;
const serverArgs = process.argv.slice(2);
const port = serverArgs.find((a) => a.startsWith('--http.port='))?.split('=')[1] ?? '9090';

const say = (line = '') => process.stdout.write(`${line}\n`);

say('demo: starting a local control plane (etcd + kube-apiserver)...');
const cp = await startControlPlane();
const kc = new KubeConfig();
kc.loadFromFile(cp.kubeconfigPath);
await createNodes(kc.makeApiClient(CoreV1Api), DEMO_NODES, { prefix: 'demo' });
say(`demo: kube-apiserver ${cp.server} with ${DEMO_NODES} demo nodes (kubeconfig: ${cp.kubeconfigPath})`);

// The server keeps users and sessions as custom resources: install the chart's CRDs, as Helm would.
const crds = fileURLToPath(new URL('../charts/platform-apiserver/files/crds/', import.meta.url));
const kubectl = (...args: string[]) =>
  execFileSync(cp.binaries.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], { stdio: 'pipe' });
kubectl('apply', '-f', crds);
kubectl('wait', '--for=condition=Established', '--timeout=60s', '-f', crds);

// A first administrator with a random password, kept in a 0600 file inside the control plane's temp dir
// (removed with it); the server creates the User at start.
const passwordFile = path.join(cp.dir, 'admin-password');
writeFileSync(passwordFile, randomBytes(12).toString('base64url'), { mode: 0o600 });

const entry = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const server = spawn(
  process.execPath,
  [
    entry,
    `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
    `--http.port=${port}`,
    '--auth.bootstrapAdmin.username=admin',
    `--auth.bootstrapAdmin.passwordFile=${passwordFile}`,
    '--auth.bootstrapAdmin.groups=system:masters',
    ...serverArgs,
  ],
  { stdio: ['ignore', 'inherit', 'inherit'] },
);

let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  if (server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
  await cp.stop();
  say('demo: stopped; control plane removed.');
  process.exit(code);
};
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
server.once('exit', (code) => void stop(code ?? 1));

const url = `http://127.0.0.1:${port}`;
await waitFor(
  'the server to become ready',
  async () => ((await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined),
  {
    timeoutMs: 60_000,
    intervalMs: 200,
  },
).catch(async (err: Error) => {
  say(`demo: ${err.message}`);
  await stop(1);
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
say(
  `  kubectl --kubeconfig ${cp.kubeconfigPath} get nodes   # the same nodes, straight from the kube-apiserver`,
);
say();
