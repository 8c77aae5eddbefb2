import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  connectFrom,
  containerPid,
  cpuMilli,
  env,
  listenerPod,
  makeKubectl,
  memoryBytes,
  processEnvironment,
  run,
  streamRequests,
  waitFor,
} from './e2e-tools.ts';

// End-to-end: the chart installed with helm on the one-node cluster that test/e2e/run.sh starts (a real
// kubelet, containerd + runc, kube-proxy, kube-router enforcing NetworkPolicy, Traefik as the Ingress
// controller), the image built from
// deploy/Dockerfile, and every request from outside going through the Ingress. Run with
// `npm run test:e2e`; the cluster's addresses come from the environment run.sh sets.

const kubeconfig = env('E2E_KUBECONFIG');
const kubectlBin = env('E2E_KUBECTL');
const helmBin = env('E2E_HELM');
const image = env('E2E_IMAGE');
const nodeName = env('E2E_NODE_NAME');
const containerdSocket = env('E2E_CONTAINERD_SOCK');
const apiserver = new URL(env('E2E_APISERVER'));
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
const PRIORITY_CLASS = 'pa-e2e-critical';
const ZONE_LABEL = 'topology.kubernetes.io/zone';
// Secrets the chart is told to read (an existing Secret may be named): the OAuth clients and the log
// store's credentials. Random per run, so nothing of them can be a constant in the chart or the image.
const CLIENT_SECRET = randomBytes(12).toString('hex');
const LOG_STORE_PASSWORD = randomBytes(12).toString('hex');
// The log store of the config: an address on the node where nothing listens (no log store runs here;
// the log API then answers an error and nothing else is affected).
const LOG_STORE = `http://${apiserver.hostname}:9200`;
// Pods the server's egress is tried against: a stand-in for cluster DNS and another Pod.
const PEERS = 'pa-e2e-peers';
// The cluster's Prometheus (on the node's address), scraping the kubelet, node_exporter and
// kube-state-metrics: the monitoring API's endpoint.
const prometheus = new URL(env('E2E_PROMETHEUS_URL'));

const [imageRepository, imageTag] = [
  image.slice(0, image.lastIndexOf(':')),
  image.slice(image.lastIndexOf(':') + 1),
];

const kubectl = makeKubectl(kubectlBin, kubeconfig);

async function helm(args: string[]): Promise<string> {
  const { stdout } = await run(helmBin, [`--kubeconfig=${kubeconfig}`, `--namespace=${NAMESPACE}`, ...args], {
    maxBuffer: 64 << 20,
  });
  return stdout;
}

/** Values of every install and upgrade; `imageDigest` is read from the node before the install. */
function chartValues(imageDigest: string): string[] {
  return [
    `--set=image.repository=${imageRepository}`,
    // Ignored: the digest wins (it is how the Pods are shown to run the image by digest).
    `--set=image.tag=${imageTag}`,
    `--set=image.digest=${imageDigest}`,
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
    // The escape hatches and the Secrets (chart completeness).
    '--set=commonLabels.e2e\\.platform\\.io/suite=chart',
    '--set=podLabels.e2e\\.platform\\.io/pod=server',
    '--set=podAnnotations.e2e\\.platform\\.io/note=from-values',
    `--set=priorityClassName=${PRIORITY_CLASS}`,
    '--set=topologySpreadConstraints[0].maxSkew=1',
    `--set=topologySpreadConstraints[0].topologyKey=${ZONE_LABEL}`,
    '--set=topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule',
    '--set=topologySpreadConstraints[0].labelSelector.matchLabels.app\\.kubernetes\\.io/instance=pa',
    '--set=extraEnv[0].name=PLATFORM_AUTH_ACCESS_TOKEN_MAX_AGE_SECONDS',
    '--set-string=extraEnv[0].value=3600',
    '--set=extraEnv[1].name=E2E_POD_NAME',
    '--set=extraEnv[1].valueFrom.fieldRef.fieldPath=metadata.name',
    '--set=extraVolumes[0].name=extra',
    '--set=extraVolumes[0].configMap.name=pa-e2e-extra',
    '--set=extraVolumeMounts[0].name=extra',
    '--set=extraVolumeMounts[0].mountPath=/etc/e2e-extra',
    '--set=extraVolumeMounts[0].readOnly=true',
    '--set=oauth.existingSecret=pa-e2e-oauth',
    `--set=config.logging.hosts={${LOG_STORE}}`,
    '--set=logStore.passwordSecret.name=pa-e2e-log-store',
    '--set=logStore.passwordSecret.usernameKey=username',
    // The egress policy: the kube-apiserver looked up at install, the log store by address, DNS to the
    // default peers (Pods labelled k8s-app=kube-dns).
    '--set=networkPolicy.enabled=true',
    '--set=networkPolicy.egress.enabled=true',
    `--set=networkPolicy.egress.logStoreTo[0].ipBlock.cidr=${apiserver.hostname}/32`,
    `--set=config.monitoring.endpoint=${prometheus.origin}`,
    `--set=networkPolicy.egress.monitoringTo[0].ipBlock.cidr=${prometheus.hostname}/32`,
  ];
}

interface TokenResponse {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

function tokenRequest(params: Record<string, string>, clientSecret = CLIENT_SECRET): RequestInit {
  return {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...params, client_id: 'platform', client_secret: clientSecret }),
  };
}

async function login(password: string, at = base): Promise<TokenResponse> {
  const res = await fetch(
    `${at}/oauth/token`,
    tokenRequest({ grant_type: 'password', username: 'admin', password }),
  );
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as TokenResponse;
}

async function refresh(refreshToken: string, at = base): Promise<Response> {
  return fetch(
    `${at}/oauth/token`,
    tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  );
}

const NODES = '/kapis/resources.platform.io/v1alpha3/nodes';
const MONITORING = '/kapis/monitoring.platform.io/v1alpha3';

interface MetricsAnswer {
  results: {
    metric_name: string;
    data: { result?: { metric: Record<string, string>; value: [number, string] }[] };
    error?: string;
  }[];
}

/**
 * The named metrics of one monitoring path, asked through the Ingress: each metric's only series. An
 * error, more than one series, or a metric without one (yet: waitFor retries) fails.
 */
async function monitoringValues(
  token: string,
  path: string,
  names: string[],
): Promise<Map<string, { labels: Record<string, string>; value: number }>> {
  const filter = names.map((n) => `^${n}$`).join('|');
  const res = await fetch(`${base}${MONITORING}${path}?metrics_filter=${encodeURIComponent(filter)}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 200, await res.clone().text());
  const { results } = (await res.json()) as MetricsAnswer;
  assert.deepEqual(results.map((r) => r.metric_name).sort(), [...names].sort());
  const values = new Map<string, { labels: Record<string, string>; value: number }>();
  for (const r of results) {
    assert.equal(r.error, undefined, `${r.metric_name}: ${r.error}`);
    const series = r.data.result ?? [];
    assert.ok(series.length <= 1, `${r.metric_name}: one series, not ${JSON.stringify(series)}`);
    if (series[0]) values.set(r.metric_name, { labels: series[0].metric, value: Number(series[0].value[1]) });
  }
  const missing = names.filter((n) => !values.has(n));
  assert.deepEqual(missing, [], `metrics without a series: ${missing.join(', ')}`);
  return values;
}

interface Pod {
  metadata: {
    name: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec: {
    nodeName: string;
    priority?: number;
    priorityClassName?: string;
    topologySpreadConstraints?: { topologyKey: string; whenUnsatisfiable: string }[];
    containers: {
      image: string;
      resources: { requests?: Record<string, string>; limits?: Record<string, string> };
    }[];
    initContainers?: unknown[];
  };
  status: {
    phase: string;
    podIP: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      containerID?: string;
      imageID: string;
      ready: boolean;
      restartCount: number;
      lastState: { terminated?: { exitCode: number } };
    }[];
  };
}

async function serverPods(): Promise<Pod[]> {
  const list = JSON.parse(
    await kubectl(['get', 'pods', '-n', NAMESPACE, '-l', 'app.kubernetes.io/instance=pa', '-o', 'json']),
  ) as { items: Pod[] };
  return list.items;
}

/** Asks the Eviction API to evict `pod` (what `kubectl drain` does), which the PodDisruptionBudget guards. */
async function evict(pod: Pod): Promise<void> {
  const file = join(work, `eviction-${pod.metadata.name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: pod.metadata.name, namespace: NAMESPACE },
    }),
  );
  try {
    await kubectl([
      'create',
      '--raw',
      `/api/v1/namespaces/${NAMESPACE}/pods/${pod.metadata.name}/eviction`,
      '-f',
      file,
    ]);
  } catch (err) {
    throw new Error((err as { stderr?: string }).stderr ?? String(err), { cause: err });
  }
}

/** The server's Pods that run and are ready, and are not being deleted. */
async function readyPods(): Promise<Pod[]> {
  return (await serverPods()).filter(
    (p) =>
      !p.metadata.deletionTimestamp &&
      p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
}

/** Waits until `count` answers in a row through the Ingress are 200 (its routes follow the endpoints). */
async function ingressSettled(what: string, send: () => Promise<Response>, count = 10): Promise<void> {
  let inARow = 0;
  await waitFor(`${count} answers in a row through the Ingress (${what})`, 180, async () => {
    const ok = await send().then(
      (res) => res.status === 200,
      () => false,
    );
    inARow = ok ? inARow + 1 : 0;
    return inARow >= count ? true : undefined;
  });
}

describe('the chart on a one-node cluster, reached through a real Ingress', () => {
  let adminPassword = '';
  let imageDigest = '';

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
    // The image's digest as the node's runtime knows it (imported from the archive, never pulled).
    imageDigest = await waitFor('the node to report the image with its digest', 120, async () => {
      const node = JSON.parse(await kubectl(['get', 'node', nodeName, '-o', 'json'])) as {
        status: { images?: { names: string[] }[] };
      };
      const names = (node.status.images ?? []).find((i) => i.names.includes(image))?.names ?? [];
      return names.find((n) => n.startsWith(`${imageRepository}@sha256:`))?.split('@')[1];
    });
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
    await kubectl([
      'create',
      'secret',
      'generic',
      'pa-e2e-oauth',
      '-n',
      NAMESPACE,
      `--from-literal=clients=platform:${CLIENT_SECRET},e2e-cli:${randomBytes(8).toString('hex')}`,
    ]);
    await kubectl([
      'create',
      'secret',
      'generic',
      'pa-e2e-log-store',
      '-n',
      NAMESPACE,
      '--from-literal=username=e2e-reader',
      `--from-literal=password=${LOG_STORE_PASSWORD}`,
    ]);
    await kubectl([
      'create',
      'configmap',
      'pa-e2e-extra',
      '-n',
      NAMESPACE,
      '--from-literal=note.txt=mounted through extraVolumes',
    ]);
    await kubectl(['create', 'priorityclass', PRIORITY_CLASS, '--value=1000000']);
    // One zone: the spread constraint (DoNotSchedule per zone) is satisfiable and really evaluated.
    await kubectl(['label', 'node', nodeName, `${ZONE_LABEL}=e2e-a`, '--overwrite']);
    await helm(['install', RELEASE, chartDir, '--wait', '--timeout=5m', ...chartValues(imageDigest)]);
    const secret = JSON.parse(
      await kubectl(['get', 'secret', `${RELEASE}-admin`, '-n', NAMESPACE, '-o', 'json']),
    ) as { data: Record<string, string> };
    adminPassword = Buffer.from(secret.data['password'] ?? '', 'base64').toString();
    // Traefik picks the Ingress and its endpoints up from its watch.
    await ingressSettled('after the install', () =>
      fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) }),
    );
  });

  after(async () => {
    await helm(['uninstall', RELEASE, '--wait', '--timeout=2m']).catch(() => undefined);
    await kubectl(['delete', 'namespace', NAMESPACE, '--wait=true', '--timeout=2m']).catch(() => undefined);
    await kubectl(['delete', 'namespace', PEERS, '--ignore-not-found', '--wait=true', '--timeout=2m']).catch(
      () => undefined,
    );
    await kubectl(['delete', 'users.iam.platform.io', 'admin', '--ignore-not-found']).catch(() => undefined);
    await kubectl(['delete', 'priorityclass', PRIORITY_CLASS, '--ignore-not-found']).catch(() => undefined);
    await kubectl(['label', 'node', nodeName, `${ZONE_LABEL}-`]).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  });

  test('the kubelet registered a real Node, and both Pods run the built image on it, by digest', async () => {
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

    const running = (await serverPods()).filter((p) => p.status.phase === 'Running');
    assert.equal(running.length, 2);
    for (const pod of running) {
      assert.equal(pod.spec.nodeName, nodeName);
      assert.equal(pod.spec.containers[0]?.image, `${imageRepository}@${imageDigest}`);
      assert.ok(pod.status.containerStatuses?.[0]?.imageID.endsWith(imageDigest));
      assert.match(pod.status.podIP, /^10\.214\.0\./);
    }
  });

  test('the escape hatches reach the real Pods: labels, annotations, priority, spread, env, volumes', async () => {
    const pods = (await serverPods()).filter((p) => p.status.phase === 'Running');
    for (const pod of pods) {
      assert.equal(pod.metadata.labels['e2e.platform.io/suite'], 'chart');
      assert.equal(pod.metadata.labels['e2e.platform.io/pod'], 'server');
      assert.equal(pod.metadata.annotations?.['e2e.platform.io/note'], 'from-values');
      // The admission plugin resolved the class to its value: the scheduler and the kubelet see it.
      assert.equal(pod.spec.priorityClassName, PRIORITY_CLASS);
      assert.equal(pod.spec.priority, 1000000);
      assert.deepEqual(
        pod.spec.topologySpreadConstraints?.map((c) => [c.topologyKey, c.whenUnsatisfiable]),
        [[ZONE_LABEL, 'DoNotSchedule']],
      );

      // The server's process as this host sees it: its environment and its mounts.
      const pid = await containerPid(containerdSocket, pod.status.containerStatuses![0]!.containerID!);
      const environment = processEnvironment(pid);
      assert.equal(environment.get('E2E_POD_NAME'), pod.metadata.name);
      assert.equal(environment.get('PLATFORM_AUTH_ACCESS_TOKEN_MAX_AGE_SECONDS'), '3600');
      // Credentials from the Secrets, as variables, never in the config file.
      assert.match(environment.get('PLATFORM_AUTH_CLIENTS') ?? '', new RegExp(`^platform:${CLIENT_SECRET},`));
      assert.equal(environment.get('PLATFORM_LOGGING_PASSWORD'), LOG_STORE_PASSWORD);
      assert.equal(environment.get('PLATFORM_LOGGING_USERNAME'), 'e2e-reader');
      assert.equal(
        readFileSync(`/proc/${pid}/root/etc/e2e-extra/note.txt`, 'utf8'),
        'mounted through extraVolumes',
      );
      const config = readFileSync(`/proc/${pid}/root/etc/platform-apiserver/config.yaml`, 'utf8');
      assert.ok(config.includes(LOG_STORE));
      assert.ok(!config.includes(CLIENT_SECRET) && !config.includes(LOG_STORE_PASSWORD));
    }
    // The common labels are on every object of the release.
    const labelled = await kubectl([
      'get',
      'deployment,service,configmap,secret,serviceaccount,poddisruptionbudget,ingress,networkpolicy',
      '-n',
      NAMESPACE,
      '-l',
      'e2e.platform.io/suite=chart',
      '-o',
      'name',
    ]);
    for (const name of [
      'deployment.apps/pa',
      'service/pa',
      'configmap/pa',
      'secret/pa-admin',
      'secret/pa-signing-keys',
      'serviceaccount/pa',
      'poddisruptionbudget.policy/pa',
      'ingress.networking.k8s.io/pa',
      'networkpolicy.networking.k8s.io/pa',
    ])
      assert.ok(labelled.split('\n').includes(name), `${name} carries the common labels: ${labelled}`);
  });

  test("the egress policy names the kube-apiserver's real endpoints (looked up at install), the log store, Prometheus and DNS", async () => {
    const slice = JSON.parse(
      await kubectl(['get', 'endpointslice', 'kubernetes', '-n', 'default', '-o', 'json']),
    ) as { endpoints: { addresses: string[] }[]; ports: { port: number }[] };
    assert.deepEqual(
      slice.endpoints.flatMap((e) => e.addresses),
      [apiserver.hostname],
    );
    const policy = JSON.parse(
      await kubectl(['get', 'networkpolicy', 'pa', '-n', NAMESPACE, '-o', 'json']),
    ) as {
      spec: { policyTypes: string[]; egress: unknown[] };
    };
    assert.deepEqual(policy.spec.policyTypes, ['Ingress', 'Egress']);
    assert.deepEqual(policy.spec.egress, [
      {
        to: [{ ipBlock: { cidr: `${apiserver.hostname}/32` } }],
        ports: [{ port: Number(apiserver.port), protocol: 'TCP' }],
      },
      { to: [{ ipBlock: { cidr: `${apiserver.hostname}/32` } }], ports: [{ port: 9200, protocol: 'TCP' }] },
      {
        to: [{ ipBlock: { cidr: `${prometheus.hostname}/32` } }],
        ports: [{ port: Number(prometheus.port), protocol: 'TCP' }],
      },
      {
        to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
      },
    ]);
  });

  test("kube-router enforces the egress policy: from the server's Pod the kube-apiserver, Prometheus and DNS answer, nothing else; without the policy all do", async () => {
    // The peers: a stand-in for cluster DNS (this cluster has none; the policy's DNS rule selects Pods
    // labelled k8s-app=kube-dns, port 53), also listening on a port the rule does not open, and another Pod.
    await kubectl(['create', 'namespace', PEERS]);
    try {
      const manifest = join(work, 'peers.json');
      const peerImage = `${imageRepository}@${imageDigest}`;
      writeFileSync(
        manifest,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: [
            listenerPod('dns', PEERS, peerImage, [53, 8080], { 'k8s-app': 'kube-dns' }),
            listenerPod('other', PEERS, peerImage, [8080], { app: 'pa-e2e-other' }),
          ],
        }),
      );
      await kubectl(['apply', '-f', manifest]);
      await kubectl(['wait', '--for=condition=Ready', 'pod', '--all', '-n', PEERS, '--timeout=120s']);
      const jsonpath = async (args: string[], path: string) =>
        (await kubectl([...args, '-o', `jsonpath={${path}}`])).trim();
      const dns = await jsonpath(['get', 'pod', 'dns', '-n', PEERS], '.status.podIP');
      const other = await jsonpath(['get', 'pod', 'other', '-n', PEERS], '.status.podIP');
      const serviceIp = await jsonpath(['get', 'service', 'kubernetes', '-n', 'default'], '.spec.clusterIP');

      // Connections opened in the server's own network namespace (its Pod's address), from this host.
      const [server] = await readyPods();
      assert.ok(server);
      const pid = await containerPid(containerdSocket, server.status.containerStatuses![0]!.containerID!);
      const targets: Record<string, [string, number]> = {
        'the kube-apiserver (its endpoint)': [apiserver.hostname, Number(apiserver.port)],
        'the kube-apiserver (the kubernetes Service)': [serviceIp, 443],
        'DNS (the kube-dns Pod, port 53)': [dns, 53],
        'the kube-dns Pod on another port': [dns, 8080],
        'another Pod': [other, 8080],
        'the kubelet on the node': [apiserver.hostname, 10250],
        'Prometheus on the node': [prometheus.hostname, Number(prometheus.port)],
      };
      // kube-router applies a change asynchronously (after its watch sees it): polled until the
      // connections go as expected, else the last outcomes are the failure.
      const expectReach = (what: string, expected: Record<string, boolean>) =>
        waitFor(what, 60, async () => {
          const outcomes = Object.fromEntries(
            await Promise.all(
              Object.entries(targets).map(async ([name, [host, port]]) => [
                name,
                await connectFrom(pid, host, port),
              ]),
            ),
          ) as Record<string, string>;
          const reached = Object.fromEntries(
            Object.entries(outcomes).map(([n, o]) => [n, o === 'connected']),
          );
          assert.deepEqual(reached, expected, JSON.stringify(outcomes));
          return true;
        });
      const enforced = {
        'the kube-apiserver (its endpoint)': true,
        'the kube-apiserver (the kubernetes Service)': true,
        'DNS (the kube-dns Pod, port 53)': true,
        'the kube-dns Pod on another port': false,
        'another Pod': false,
        'the kubelet on the node': false,
        'Prometheus on the node': true,
      };
      await expectReach("the chart's egress policy to be enforced", enforced);

      // The same chart without its egress rules (the NetworkPolicy then restricts ingress only).
      await helm([
        'upgrade',
        RELEASE,
        chartDir,
        '--wait',
        '--timeout=2m',
        ...chartValues(imageDigest),
        '--set=networkPolicy.egress.enabled=false',
      ]);
      await expectReach(
        'every connection to open without the egress policy',
        Object.fromEntries(Object.keys(targets).map((name) => [name, true])),
      );

      // And back: the tests after this one run under the enforced policy.
      await helm(['upgrade', RELEASE, chartDir, '--wait', '--timeout=2m', ...chartValues(imageDigest)]);
      await expectReach('the egress policy to be enforced again', enforced);
    } finally {
      await kubectl(['delete', 'namespace', PEERS, '--wait=true', '--timeout=2m']);
    }
  });

  test('through the Ingress: a token, the node list with the real Node and its allocation, and /metrics', async () => {
    // The OAuth clients are the Secret's: the default client's secret is refused.
    const refused = await fetch(
      `${base}/oauth/token`,
      tokenRequest({ grant_type: 'password', username: 'admin', password: adminPassword }, 'platform'),
    );
    assert.equal(refused.status, 401, await refused.clone().text());
    const tokens = await login(adminPassword);
    // PLATFORM_AUTH_ACCESS_TOKEN_MAX_AGE_SECONDS from extraEnv (default 7200).
    assert.equal(tokens.expires_in, 3600);

    // The allocation annotations of the real Node are the sums of the real Pods' requests and limits.
    const node = JSON.parse(await kubectl(['get', 'node', nodeName, '-o', 'json'])) as {
      status: { allocatable: Record<string, string> };
    };
    const allocatableCpu = cpuMilli(node.status.allocatable['cpu']!);
    const allocatableMemory = memoryBytes(node.status.allocatable['memory']!);
    const P = 'node.platform.io/';
    await waitFor("the node list's allocation annotations to match the node's Pods", 60, async () => {
      const pods = (
        JSON.parse(
          await kubectl(['get', 'pods', '-A', '--field-selector', `spec.nodeName=${nodeName}`, '-o', 'json']),
        ) as { items: Pod[] }
      ).items.filter((p) => p.status.phase !== 'Succeeded' && p.status.phase !== 'Failed');
      assert.ok(pods.length >= 2);
      const sum = (pick: (c: Pod['spec']['containers'][number]) => number) =>
        pods.reduce((total, p) => {
          assert.equal(p.spec.initContainers, undefined, 'no init containers (the sum is of app containers)');
          return total + p.spec.containers.reduce((s, c) => s + pick(c), 0);
        }, 0);
      const expected = {
        cpuRequests: sum((c) => cpuMilli(c.resources.requests?.['cpu'] ?? '0')),
        cpuLimits: sum((c) => cpuMilli(c.resources.limits?.['cpu'] ?? '0')),
        memoryRequests: sum((c) => memoryBytes(c.resources.requests?.['memory'] ?? '0')),
        memoryLimits: sum((c) => memoryBytes(c.resources.limits?.['memory'] ?? '0')),
      };
      const res = await fetch(`${base}${NODES}`, {
        headers: { Authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(res.status, 200, await res.clone().text());
      const list = (await res.json()) as {
        items: { metadata: { name: string; annotations: Record<string, string> } }[];
      };
      const listed = list.items.find((n) => n.metadata.name === nodeName);
      assert.ok(
        listed,
        `the list names ${nodeName}: ${JSON.stringify(list.items.map((n) => n.metadata.name))}`,
      );
      const a = listed.metadata.annotations;
      const actual = {
        cpuRequests: cpuMilli(a[`${P}cpu-requests`]!),
        cpuLimits: cpuMilli(a[`${P}cpu-limits`]!),
        memoryRequests: memoryBytes(a[`${P}memory-requests`]!),
        memoryLimits: memoryBytes(a[`${P}memory-limits`]!),
      };
      if (JSON.stringify(actual) !== JSON.stringify(expected)) return undefined;
      const percent = (n: number, of: number) => `${Math.trunc((n / of) * 100)}%`;
      assert.equal(a[`${P}cpu-requests-fraction`], percent(expected.cpuRequests, allocatableCpu));
      assert.equal(a[`${P}cpu-limits-fraction`], percent(expected.cpuLimits, allocatableCpu));
      assert.equal(a[`${P}memory-requests-fraction`], percent(expected.memoryRequests, allocatableMemory));
      assert.equal(a[`${P}memory-limits-fraction`], percent(expected.memoryLimits, allocatableMemory));
      // At least the two server Pods: 100m / 128Mi requested and 1 CPU / 512Mi limited each.
      assert.ok(expected.cpuRequests >= 200 && expected.memoryLimits >= 2 * 512 * 1024 ** 2);
      return true;
    });

    const metrics = await fetch(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^platform_http_requests_total\{/m);
  });

  test('in each server Pod the login thread runs on the ServiceAccount token the main thread hands it, and serves the logins', async () => {
    const logLines = async (pod: Pod) =>
      (await kubectl(['logs', '-n', NAMESPACE, pod.metadata.name]))
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const fromThread = (lines: Record<string, unknown>[], message: string) =>
      lines.filter((l) => l['thread'] === 'login' && l['message'] === message);
    const pods = await readyPods();
    assert.equal(pods.length, 2);
    for (const pod of pods) {
      // Ready once its own users and sessions caches have synced: listed and watched with the handed token.
      await waitFor(`the login thread of ${pod.metadata.name} to be ready`, 60, async () =>
        fromThread(await logLines(pod), 'start-up memory released').length > 0 ? true : undefined,
      );
      const lines = await logLines(pod);
      assert.deepEqual(
        lines.filter((l) => l['thread'] === 'login' && l['level'] === 'error'),
        [],
        `${pod.metadata.name}: no error from the login thread`,
      );
    }
    const before = (await Promise.all(pods.map(logLines))).flatMap((lines) => fromThread(lines, 'login'));
    await login(adminPassword);
    await waitFor('the login to be logged by a login thread', 30, async () => {
      const after = (await Promise.all(pods.map(logLines))).flatMap((lines) => fromThread(lines, 'login'));
      return after.filter((l) => l['outcome'] === 'success').length >
        before.filter((l) => l['outcome'] === 'success').length
        ? true
        : undefined;
    });
  });

  test("through the Ingress: the real node's CPU and memory, a server Pod's usage and the cluster's, as Prometheus scraped them", async (t) => {
    const { access_token } = await login(adminPassword);
    const node = JSON.parse(await kubectl(['get', 'node', nodeName, '-o', 'json'])) as {
      status: { capacity: Record<string, string>; addresses: { type: string; address: string }[] };
    };
    const nodeIp = node.status.addresses.find((a) => a.type === 'InternalIP')?.address;
    // Recorded series need a few scrapes and rule evaluations (every 5 s) after the cluster came up, and
    // a Pod's CPU rate two cAdvisor scrapes after it started.
    const nodeMetrics = await waitFor("the node's metrics", 120, () =>
      monitoringValues(access_token, `/nodes/${nodeName}`, [
        'node_cpu_utilisation',
        'node_cpu_total',
        'node_memory_utilisation',
        'node_memory_total',
        'node_pod_quota',
      ]),
    );
    const nodeValue = (name: string) => nodeMetrics.get(name)!.value;
    for (const [name, { labels }] of nodeMetrics) assert.equal(labels['node'], nodeName, name);
    // node_exporter's series joined to the node through its Pod: the node's address comes with them.
    assert.equal(nodeMetrics.get('node_cpu_utilisation')!.labels['host_ip'], nodeIp);
    // The machine's own figures, as node_exporter and kube-state-metrics read them, equal the kubelet's.
    assert.equal(nodeValue('node_cpu_total'), Number(node.status.capacity['cpu']));
    assert.equal(nodeValue('node_memory_total'), memoryBytes(node.status.capacity['memory']!));
    assert.equal(nodeValue('node_pod_quota'), Number(node.status.capacity['pods']));
    // The share of each CPU that was busy, as a rate of recorded busy seconds: recorded every 5 s from
    // node_exporter's latest scrape (every 1 s), so off by at most one scrape in five (the machine is
    // shared: it is often busy all the time, so the rate reads 1.0 give or take that).
    assert.ok(
      nodeValue('node_cpu_utilisation') > 0 && nodeValue('node_cpu_utilisation') <= 1.25,
      `node_cpu_utilisation ${nodeValue('node_cpu_utilisation')}`,
    );
    assert.ok(
      nodeValue('node_memory_utilisation') > 0 && nodeValue('node_memory_utilisation') < 1,
      `node_memory_utilisation ${nodeValue('node_memory_utilisation')}`,
    );

    // One of the server's own Pods, from the kubelet's cAdvisor joined to kube-state-metrics' Pod series.
    const [pod] = await readyPods();
    assert.ok(pod);
    // CPU in cores, rounded to millicores: waited for until the Pod has used some (the requests of this
    // test reach both replicas through the Ingress).
    const podMetrics = await waitFor("a server Pod's metrics, with CPU used", 120, async () => {
      const values = await monitoringValues(
        access_token,
        `/namespaces/${NAMESPACE}/pods/${pod.metadata.name}`,
        ['pod_cpu_usage', 'pod_memory_usage', 'pod_memory_usage_wo_cache'],
      );
      assert.ok(values.get('pod_cpu_usage')!.value > 0, 'pod_cpu_usage is 0');
      return values;
    });
    for (const [name, { labels }] of podMetrics) {
      assert.equal(labels['pod'], pod.metadata.name, name);
      assert.equal(labels['node'], nodeName, name);
      assert.equal(labels['owner_kind'], 'ReplicaSet', name);
    }
    // At most the container's limit of 1 CPU; memory in bytes: a Node.js server holds tens of MiB, and
    // its container is limited to 512 MiB.
    const podValue = (name: string) => podMetrics.get(name)!.value;
    assert.ok(podValue('pod_cpu_usage') <= 1, `pod_cpu_usage ${podValue('pod_cpu_usage')}`);
    for (const name of ['pod_memory_usage', 'pod_memory_usage_wo_cache'])
      assert.ok(
        podValue(name) > 10 * 1024 ** 2 && podValue(name) <= 512 * 1024 ** 2,
        `${name} ${podValue(name)}`,
      );

    const clusterMetrics = await waitFor("the cluster's metrics", 60, () =>
      monitoringValues(access_token, '/cluster', [
        'cluster_cpu_utilisation',
        'cluster_cpu_total',
        'cluster_memory_utilisation',
        'cluster_memory_total',
      ]),
    );
    const clusterValue = (name: string) => clusterMetrics.get(name)!.value;
    t.diagnostic(
      [...nodeMetrics, ...podMetrics, ...clusterMetrics]
        .map(([name, { value }]) => `${name} ${value}`)
        .join(', '),
    );
    // One node: the cluster's totals are the node's.
    assert.equal(clusterValue('cluster_cpu_total'), nodeValue('node_cpu_total'));
    assert.equal(clusterValue('cluster_memory_total'), nodeValue('node_memory_total'));
    assert.ok(
      clusterValue('cluster_cpu_utilisation') > 0 && clusterValue('cluster_cpu_utilisation') <= 1.25,
      `cluster_cpu_utilisation ${clusterValue('cluster_cpu_utilisation')}`,
    );
    assert.ok(
      clusterValue('cluster_memory_utilisation') > 0 && clusterValue('cluster_memory_utilisation') < 1,
      `cluster_memory_utilisation ${clusterValue('cluster_memory_utilisation')}`,
    );
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

  test('a rolling restart of 2 replicas under a steady stream of authenticated requests loses none', async (t) => {
    const { access_token } = await login(adminPassword);
    const before = new Set((await readyPods()).map((p) => p.metadata.name));
    assert.equal(before.size, 2);
    // Both the cached API and the Kubernetes API proxy, alternately, as a client would use them.
    let turn = 0;
    const stream = streamRequests(
      (signal) =>
        fetch(turn++ % 2 ? `${base}${NODES}` : `${base}/api/v1/namespaces/${NAMESPACE}/pods?limit=1`, {
          headers: { Authorization: `Bearer ${access_token}` },
          signal,
        }),
      { workers: 2, timeoutMs: 20_000 },
    );
    try {
      await kubectl(['rollout', 'restart', `deployment/${RELEASE}`, '-n', NAMESPACE]);
      await kubectl(['rollout', 'status', `deployment/${RELEASE}`, '-n', NAMESPACE, '--timeout=5m']);
      // The stream runs on until the old Pods have finished terminating (preStop sleep, then drain).
      await waitFor('the old Pods to be gone', 180, async () => {
        const names = (await serverPods()).map((p) => p.metadata.name);
        return names.some((n) => before.has(n)) ? undefined : names;
      });
    } finally {
      const result = await stream.stop();
      t.diagnostic(`${result.ok} requests answered 200, ${result.failures.length} failed`);
      assert.deepEqual(
        result.failures,
        [],
        `${result.failures.length} failed of ${result.ok + result.failures.length}`,
      );
      assert.ok(result.ok >= 50, `a steady stream: ${result.ok} requests answered`);
    }
    const after = await readyPods();
    assert.equal(after.length, 2);
    assert.ok(
      after.every((p) => !before.has(p.metadata.name)),
      'both Pods were replaced',
    );
  });

  test('the PodDisruptionBudget lets one Pod be evicted at a time, and an eviction loses no request', async (t) => {
    const { access_token } = await login(adminPassword);
    const [first, second] = await readyPods();
    assert.ok(first && second);
    const stream = streamRequests(
      (signal) => fetch(`${base}${NODES}`, { headers: { Authorization: `Bearer ${access_token}` }, signal }),
      { workers: 2, timeoutMs: 20_000 },
    );
    try {
      await evict(first);
      // One Pod is going: the budget (maxUnavailable 1) refuses a second eviction until its replacement is ready.
      await assert.rejects(evict(second), /disruption budget/);
      await waitFor('the evicted Pod to be gone and replaced', 180, async () => {
        const pods = await serverPods();
        const ready = await readyPods();
        return !pods.some((p) => p.metadata.name === first.metadata.name) && ready.length === 2
          ? true
          : undefined;
      });
    } finally {
      const result = await stream.stop();
      t.diagnostic(`${result.ok} requests answered 200, ${result.failures.length} failed`);
      assert.deepEqual(
        result.failures,
        [],
        `${result.failures.length} failed of ${result.ok + result.failures.length}`,
      );
      assert.ok(result.ok >= 20, `a steady stream: ${result.ok} requests answered`);
    }
  });

  test("a Pod's process killed with SIGKILL: the sessions it created work on the other replica", async () => {
    const [victim, survivor] = await readyPods();
    assert.ok(victim && survivor);
    const at = (pod: Pod) => `http://${pod.status.podIP}:9090`;
    // The session is created by the victim itself (straight to its address, not through the Ingress).
    const tokens = await login(adminPassword, at(victim));
    const victimStatus = victim.status.containerStatuses![0]!;
    process.kill(await containerPid(containerdSocket, victimStatus.containerID!), 'SIGKILL');

    // The other replica accepts the access token and refreshes the session.
    const nodes = await fetch(`${at(survivor)}${NODES}`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(nodes.status, 200, await nodes.clone().text());
    const refreshed = await refresh(tokens.refresh_token, at(survivor));
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
    const rotated = (await refreshed.json()) as TokenResponse;

    // The kubelet saw the process die (exit 137) and restarted it; then the Ingress serves the session
    // from either replica.
    await waitFor('the killed container to be restarted and ready', 180, async () => {
      const pod = (await serverPods()).find((p) => p.metadata.name === victim.metadata.name);
      const status = pod?.status.containerStatuses?.[0];
      if (!status || status.restartCount <= victimStatus.restartCount || !status.ready) return undefined;
      assert.equal(status.lastState.terminated?.exitCode, 137);
      return true;
    });
    await ingressSettled('after the restart', () =>
      fetch(`${base}${NODES}`, {
        headers: { Authorization: `Bearer ${rotated.access_token}` },
        signal: AbortSignal.timeout(5000),
      }),
    );
    const again = await refresh(rotated.refresh_token);
    assert.equal(again.status, 200, await again.clone().text());
  });

  test('helm upgrade keeps the signing keys and live sessions', async () => {
    const before = await login(adminPassword);
    // A changed value rolls the Pods (the config checksum changes). --wait returns once the new Pods
    // are ready; the old ones drain while the Ingress stops routing to them, so no waiting after it.
    await helm([
      'upgrade',
      RELEASE,
      chartDir,
      '--wait',
      '--timeout=5m',
      ...chartValues(imageDigest),
      '--set=config.log.level=debug',
    ]);
    // The access token from before the upgrade: the same signing key, the same live session.
    const nodes = await fetch(`${base}${NODES}`, {
      headers: { Authorization: `Bearer ${before.access_token}` },
    });
    assert.equal(nodes.status, 200, await nodes.clone().text());
    const refreshed = await refresh(before.refresh_token);
    assert.equal(refreshed.status, 200, await refreshed.clone().text());
  });
});
