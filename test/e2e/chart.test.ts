import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

// End-to-end: the chart installed with helm on the one-node cluster that test/e2e/run.sh starts (a real
// kubelet, containerd + runc, kube-proxy, Traefik as the Ingress controller), the image built from
// deploy/Dockerfile, and every request from outside going through the Ingress. Run with
// `npm run test:e2e`; the cluster's addresses come from the environment run.sh sets.

const run = promisify(execFile);

function env(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is set (run these tests with npm run test:e2e)`);
  return value;
}

const kubeconfig = env('E2E_KUBECONFIG');
const kubectlBin = env('E2E_KUBECTL');
const helmBin = env('E2E_HELM');
const image = env('E2E_IMAGE');
const nodeName = env('E2E_NODE_NAME');
const ingressPort = new URL(env('E2E_INGRESS_URL')).port;
// The Ingress routes this host; `localhost` resolves to the loopback address Traefik listens on.
const HOST = 'localhost';
const base = `http://${HOST}:${ingressPort}`;
// The Ingress's TLS entry point, serving the certificate of the chart's ingress.tls Secret.
const tlsBase = `https://${HOST}:${new URL(env('E2E_INGRESS_TLS_URL')).port}`;
const TLS_SECRET = 'pa-e2e-tls';
const work = mkdtempSync(join(tmpdir(), 'platform-e2e-'));
const caFile = join(work, 'tls.crt');
const RELEASE = 'pa';
const NAMESPACE = 'pa-e2e';
const chartDir = new URL('../../charts/platform-apiserver', import.meta.url).pathname;

const [imageRepository, imageTag] = [
  image.slice(0, image.lastIndexOf(':')),
  image.slice(image.lastIndexOf(':') + 1),
];

async function kubectl(args: string[]): Promise<string> {
  const { stdout } = await run(kubectlBin, [`--kubeconfig=${kubeconfig}`, ...args], {
    maxBuffer: 64 << 20,
  });
  return stdout;
}

async function helm(args: string[]): Promise<string> {
  const { stdout } = await run(helmBin, [`--kubeconfig=${kubeconfig}`, `--namespace=${NAMESPACE}`, ...args], {
    maxBuffer: 64 << 20,
  });
  return stdout;
}

/** Polls `check` until it returns a value, or fails naming `what` after `seconds`. */
async function waitFor<T>(what: string, seconds: number, check: () => Promise<T | undefined>): Promise<T> {
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

const chartValues = [
  `--set=image.repository=${imageRepository}`,
  `--set=image.tag=${imageTag}`,
  // The image is only in the node's containerd (imported by the harness); there is no registry.
  '--set=image.pullPolicy=Never',
  '--set=replicaCount=2',
  '--set=ingress.enabled=true',
  `--set=ingress.className=${env('E2E_INGRESS_CLASS')}`,
  `--set=ingress.hosts[0].host=${HOST}`,
  '--set=ingress.hosts[0].paths[0].path=/',
  '--set=ingress.hosts[0].paths[0].pathType=Prefix',
  `--set=ingress.tls[0].secretName=${TLS_SECRET}`,
  `--set=ingress.tls[0].hosts[0]=${HOST}`,
];

interface TokenResponse {
  access_token: string;
  refresh_token: string;
}

async function login(password: string): Promise<TokenResponse> {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      username: 'admin',
      password,
      client_id: 'platform',
      client_secret: 'platform',
    }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as TokenResponse;
}

describe('the chart on a one-node cluster, reached through a real Ingress', () => {
  let adminPassword = '';

  before(async () => {
    // The Ingress's certificate: self-signed for the host, also the CA kubectl trusts.
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${HOST}`,
      '-addext',
      `subjectAltName=DNS:${HOST}`,
      '-keyout',
      join(work, 'tls.key'),
      '-out',
      caFile,
    ]);
    await kubectl(['create', 'namespace', NAMESPACE]);
    await kubectl([
      'create',
      'secret',
      'tls',
      TLS_SECRET,
      '-n',
      NAMESPACE,
      `--cert=${caFile}`,
      `--key=${join(work, 'tls.key')}`,
    ]);
    await helm(['install', RELEASE, chartDir, '--wait', '--timeout=5m', ...chartValues]);
    const secret = JSON.parse(
      await kubectl(['get', 'secret', `${RELEASE}-admin`, '-n', NAMESPACE, '-o', 'json']),
    ) as { data: Record<string, string> };
    adminPassword = Buffer.from(secret.data['password'] ?? '', 'base64').toString();
    // Traefik picks the Ingress and its endpoints up from its watch.
    await waitFor('the Ingress to route to the server', 120, async () => {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) });
      return res.status === 200 ? true : undefined;
    });
  });

  after(async () => {
    await helm(['uninstall', RELEASE, '--wait', '--timeout=2m']).catch(() => undefined);
    await kubectl(['delete', 'namespace', NAMESPACE, '--wait=true', '--timeout=2m']).catch(() => undefined);
    await kubectl(['delete', 'users.iam.platform.io', 'admin', '--ignore-not-found']).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  });

  test('the kubelet registered a real Node, and both Pods run the built image on it', async () => {
    const node = JSON.parse(await kubectl(['get', 'node', nodeName, '-o', 'json'])) as {
      status: {
        nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string };
        capacity: Record<string, string>;
        conditions: { type: string; status: string }[];
      };
    };
    assert.match(node.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\//);
    assert.match(node.status.nodeInfo.kubeletVersion, /^v1\./);
    assert.ok(Number(node.status.capacity['cpu']) >= 1);
    assert.equal(node.status.conditions.find((c) => c.type === 'Ready')?.status, 'True');

    const pods = JSON.parse(
      await kubectl(['get', 'pods', '-n', NAMESPACE, '-l', 'app.kubernetes.io/instance=pa', '-o', 'json']),
    ) as {
      items: {
        spec: { nodeName: string; containers: { image: string }[] };
        status: { phase: string; podIP: string };
      }[];
    };
    const running = pods.items.filter((p) => p.status.phase === 'Running');
    assert.equal(running.length, 2);
    for (const pod of running) {
      assert.equal(pod.spec.nodeName, nodeName);
      assert.equal(pod.spec.containers[0]?.image, image);
      assert.match(pod.status.podIP, /^10\.214\.0\./);
    }
  });

  test('through the Ingress: a token, the node list with the real Node, and /metrics', async () => {
    const tokens = await login(adminPassword);
    const res = await fetch(`${base}/kapis/resources.platform.io/v1alpha3/nodes`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(res.status, 200, await res.clone().text());
    const list = (await res.json()) as { items: { metadata: { name: string } }[] };
    assert.ok(
      list.items.some((n) => n.metadata.name === nodeName),
      `the list names ${nodeName}: ${JSON.stringify(list.items.map((n) => n.metadata.name))}`,
    );

    const metrics = await fetch(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^platform_http_requests_total\{/m);
  });

  test("kubectl through the Kubernetes API proxy over the Ingress's TLS, with a platform token", async () => {
    const { access_token } = await login(adminPassword);
    // kubectl sends a bearer token only over TLS.
    const out = await run(kubectlBin, [
      `--server=${tlsBase}`,
      `--certificate-authority=${caFile}`,
      `--token=${access_token}`,
      'get',
      'pods',
      '-n',
      NAMESPACE,
      '-o',
      'name',
    ]);
    assert.match(out.stdout, /^pod\/pa-/m);
  });

  test('helm test passes', async () => {
    const out = await helm(['test', RELEASE, '--timeout=3m']);
    assert.match(out, /Phase:\s+Succeeded/);
  });

  test('helm upgrade keeps the signing keys and live sessions', async () => {
    const before = await login(adminPassword);
    // A changed value rolls the Pods (the config checksum changes).
    await helm([
      'upgrade',
      RELEASE,
      chartDir,
      '--wait',
      '--timeout=5m',
      ...chartValues,
      '--set=config.log.level=debug',
    ]);
    // Until the old Pods are gone and the Ingress routes only to the new ones (Traefik follows the
    // EndpointSlices; a request to a removed Pod's address would time out at the gateway).
    await waitFor('only the upgraded Pods to remain', 180, async () => {
      const pods = JSON.parse(
        await kubectl(['get', 'pods', '-n', NAMESPACE, '-l', 'app.kubernetes.io/instance=pa', '-o', 'json']),
      ) as { items: { metadata: { annotations?: Record<string, string> } }[] };
      return pods.items.length === 2 ? true : undefined;
    });
    let inARow = 0;
    await waitFor('ten answers in a row through the Ingress', 120, async () => {
      const ok = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) }).then(
        (res) => res.status === 200,
        () => false,
      );
      inARow = ok ? inARow + 1 : 0;
      return inARow >= 10 ? true : undefined;
    });
    // The access token from before the upgrade: the same signing key, the same live session.
    const nodes = await fetch(`${base}/kapis/resources.platform.io/v1alpha3/nodes`, {
      headers: { Authorization: `Bearer ${before.access_token}` },
    });
    assert.equal(nodes.status, 200, await nodes.clone().text());
    const refreshed = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: before.refresh_token,
        client_id: 'platform',
        client_secret: 'platform',
      }),
    });
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
  });
});
