import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Agent, fetch, WebSocket } from 'undici';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { nodeFixture } from '../cluster/node-fixtures.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  installIamCrds,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { makeServingCertificate, type TestCertificates } from '../support/test-certificates.ts';

const run = promisify(execFile);
const NS = 'proxy-test';
const EDITOR = { name: 'proxy-editor', password: 'Editor-pass-1', groups: ['proxy-editors'] };
const VIEWER = { name: 'proxy-viewer', password: 'Viewer-pass-1', groups: [] as string[] };

/** kubectl sends bearer tokens only over TLS, so the platform server is reached over HTTPS. */
function kubeconfigFor(dir: string, name: string, server: string, token: string, caPem: string): string {
  const file = path.join(dir, `kubeconfig-${name}`);
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: platform',
      `  cluster: {server: "${server}", certificate-authority-data: "${Buffer.from(caPem).toString('base64')}"}`,
      'users:',
      `- name: ${name}`,
      `  user: {token: "${token}"}`,
      'contexts:',
      `- name: ${name}`,
      `  context: {cluster: platform, user: ${name}}`,
      `current-context: ${name}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return file;
}

/** GET with the path sent exactly as written (fetch would normalise `..` away). */
function rawGet(
  url: string,
  rawPath: string,
  headers: Record<string, string>,
  ca: string,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = https.request({ hostname, port, path: rawPath, method: 'GET', headers, ca }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function login(
  url: string,
  user: { name: string; password: string },
  dispatcher?: Agent,
): Promise<string> {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      username: user.name,
      password: user.password,
      client_id: 'platform',
      client_secret: 'platform',
    }).toString(),
    ...(dispatcher ? { dispatcher } : {}),
  });
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, 200, JSON.stringify(body));
  return String(body['access_token']);
}

async function proxyRequestCount(server: ServerProcess, dispatcher: Agent): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { dispatcher })).text();
  return text
    .split('\n')
    .filter(
      (l) =>
        l.startsWith('platform_upstream_request_duration_seconds_count{') && l.includes('source="proxy"'),
    )
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

async function grantRbac(kc: KubeConfig): Promise<void> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const ignoreExists = (err: { code?: number }) => {
    if (err.code !== 409) throw err;
  };
  await core.createNamespace({ body: { metadata: { name: NS } } }).catch(ignoreExists);
  await rbac
    .createClusterRole({
      body: {
        metadata: { name: 'proxy-test-node-reader' },
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }],
      },
    })
    .catch(ignoreExists);
  await rbac
    .createClusterRoleBinding({
      body: {
        metadata: { name: 'proxy-test-node-reader' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'proxy-test-node-reader',
        },
        subjects: [EDITOR.name, VIEWER.name].map((name) => ({
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'User',
          name,
        })),
      },
    })
    .catch(ignoreExists);
  await rbac
    .createNamespacedRole({
      namespace: NS,
      body: {
        metadata: { name: 'configmap-editor' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'delete'] }],
      },
    })
    .catch(ignoreExists);
  await rbac
    .createNamespacedRoleBinding({
      namespace: NS,
      body: {
        metadata: { name: 'configmap-editors' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmap-editor' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'proxy-editors' }],
      },
    })
    .catch(ignoreExists);
}

describe('Kubernetes API proxy: kubectl through the platform server', () => {
  let cp: ControlPlane;
  let kc: KubeConfig;
  let server: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;
  let dir: string;
  let kubectl: string;
  let tls: TestCertificates;
  let dispatcher: Agent;
  const tokens = { editor: '', viewer: '' };
  const configs = { editor: '', viewer: '' };

  before(async () => {
    cp = await testControlPlane();
    kubectl = cp.binaries.kubectl;
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [EDITOR.name, VIEWER.name]);
    await createUser(kc, EDITOR);
    await createUser(kc, VIEWER);
    await grantRbac(kc);
    await kc
      .makeApiClient(CoreV1Api)
      .createNode({ body: nodeFixture(1, { prefix: 'proxy' }) })
      .catch(() => undefined);
    keys = generateTestKeys();
    tls = makeServingCertificate();
    dispatcher = new Agent({ connect: { ca: tls.caPem } });
    server = await startServerProcess([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      `--http.tlsCertFile=${tls.certFile}`,
      `--http.tlsKeyFile=${tls.keyFile}`,
    ]);
    await waitFor(
      'server /readyz over TLS',
      async () => ((await fetch(`${server.url}/readyz`, { dispatcher })).status === 200 ? true : undefined),
      {
        timeoutMs: 30_000,
      },
    );
    assert.match(server.url, /^https:/);
    dir = mkdtempSync(path.join(os.tmpdir(), 'proxy-test-'));
    for (const [role, user] of [
      ['editor', EDITOR],
      ['viewer', VIEWER],
    ] as const) {
      tokens[role] = await login(server.url, user, dispatcher);
      configs[role] = kubeconfigFor(dir, user.name, server.url, tokens[role], tls.caPem);
    }
  });

  after(async () => {
    await server?.stop();
    const core = kc?.makeApiClient(CoreV1Api);
    await core?.deleteNode({ name: 'proxy-0001' }).catch(() => undefined);
    await core?.deleteNode({ name: 'proxy-0002' }).catch(() => undefined);
    if (kc) await deleteUsersAndSessions(kc, [EDITOR.name, VIEWER.name]);
    keys?.cleanup();
    tls?.cleanup();
    await dispatcher?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('kubectl get nodes works with a platform token', async () => {
    const { stdout } = await run(kubectl, ['--kubeconfig', configs.viewer, 'get', 'nodes', '-o', 'name']);
    assert.match(stdout, /^node\/proxy-0001$/m);
  });

  test('a list comes in one piece with its length, as the kube-apiserver sent it; a watch streams', async () => {
    const headers = { Authorization: `Bearer ${tokens.viewer}` };
    const ours = await fetch(`${server.url}/api/v1/nodes`, { headers, dispatcher });
    const body = await ours.text();
    assert.equal(ours.status, 200);
    assert.equal(ours.headers.get('content-length'), String(Buffer.byteLength(body)));
    assert.ok(ours.headers.get('audit-id'), 'the kube-apiserver’s own headers are relayed');
    const list = JSON.parse(body) as { kind: string; items: { metadata: { name: string } }[] };
    assert.equal(list.kind, 'NodeList');
    assert.ok(list.items.some((n) => n.metadata.name === 'proxy-0001'));

    const watch = await fetch(`${server.url}/api/v1/nodes?watch=1&fieldSelector=metadata.name=proxy-0001`, {
      headers,
      dispatcher,
    });
    assert.equal(watch.status, 200);
    assert.equal(watch.headers.get('content-length'), null);
    const reader = watch.body!.getReader();
    const first = await reader.read();
    assert.match(
      Buffer.from(first.value!).toString(),
      /"type":"ADDED"/,
      'the first event arrives while the watch is open',
    );
    await reader.cancel();
  });

  test('kubectl get nodes --watch receives a change made meanwhile', async () => {
    const watcher = spawn(
      kubectl,
      ['--kubeconfig', configs.viewer, 'get', 'nodes', '--watch', '-o', 'name'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    watcher.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await waitFor('initial list', () => (out.includes('node/proxy-0001') ? true : undefined), {
        timeoutMs: 15_000,
      });
      await kc.makeApiClient(CoreV1Api).createNode({ body: nodeFixture(2, { prefix: 'proxy' }) });
      await waitFor('the new node in the watch', () => (out.includes('node/proxy-0002') ? true : undefined), {
        timeoutMs: 15_000,
      });
    } finally {
      watcher.kill();
    }
  });

  test('kubectl auth can-i answers per the user’s RBAC', async () => {
    const canI = async (config: string) =>
      run(kubectl, ['--kubeconfig', config, 'auth', 'can-i', 'create', 'configmaps', '-n', NS]).then(
        (r) => r.stdout.trim(),
        (err: { stdout: string }) => err.stdout.trim(),
      );
    assert.equal(await canI(configs.editor), 'yes');
    assert.equal(await canI(configs.viewer), 'no');
  });

  test('kubectl create configmap: allowed for the namespace editor, 403 for the viewer', async () => {
    const name = `cm-${Date.now()}`;
    const created = await run(kubectl, [
      '--kubeconfig',
      configs.editor,
      'create',
      'configmap',
      name,
      '-n',
      NS,
      '--from-literal=a=b',
    ]);
    assert.match(created.stdout, new RegExp(`configmap/${name} created`));
    const stored = await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name, namespace: NS });
    assert.deepEqual(stored.data, { a: 'b' });

    await assert.rejects(
      run(kubectl, [
        '--kubeconfig',
        configs.viewer,
        'create',
        'configmap',
        `${name}-v`,
        '-n',
        NS,
        '--from-literal=a=b',
      ]),
      (err: { stderr: string }) =>
        /forbidden: User "proxy-viewer" cannot create resource "configmaps"/.test(err.stderr),
    );
  });

  test('kubectl apply and explain work: the cluster OpenAPI is proxied, ours lives elsewhere', async () => {
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'applied-through-platform', namespace: NS },
      data: { k: 'v' },
    });
    const apply = spawn(kubectl, ['--kubeconfig', configs.editor, 'apply', '-f', '-'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    apply.stdout.on('data', (c: Buffer) => (out += c.toString()));
    apply.stderr.on('data', (c: Buffer) => (out += c.toString()));
    apply.stdin.end(manifest);
    const code = await new Promise((resolve) => apply.once('exit', resolve));
    assert.equal(code, 0, out);
    assert.match(out, /configmap\/applied-through-platform (created|configured)/);

    const { stdout } = await run(kubectl, ['--kubeconfig', configs.viewer, 'explain', 'configmap.data']);
    assert.match(stdout, /FIELD:\s+data/);

    // The cluster's document needs a token like the rest of the Kubernetes API; ours is anonymous.
    assert.equal((await fetch(`${server.url}/openapi/v3`, { dispatcher })).status, 401);
    const ours = await fetch(`${server.url}/openapi/platform/v3`, { dispatcher });
    assert.equal(ours.status, 200);
    assert.match(((await ours.json()) as { openapi: string }).openapi, /^3\.1/);
  });

  test('Impersonate-* headers from a client are dropped: no escalation', async () => {
    const res = await fetch(`${server.url}/api/v1/namespaces/kube-system/secrets`, {
      dispatcher,
      headers: {
        Authorization: `Bearer ${tokens.viewer}`,
        'Impersonate-User': 'admin',
        'Impersonate-Group': 'system:masters',
      },
    });
    assert.equal(res.status, 403);
    const body = (await res.json()) as { kind: string; message: string };
    assert.equal(body.kind, 'Status');
    assert.match(body.message, /User "proxy-viewer" cannot list resource "secrets"/);

    await assert.rejects(
      run(kubectl, [
        '--kubeconfig',
        configs.viewer,
        '--as=admin',
        '--as-group=system:masters',
        'get',
        'secrets',
        '-n',
        'kube-system',
      ]),
      (err: { stderr: string }) => /User "proxy-viewer" cannot list resource "secrets"/.test(err.stderr),
    );
  });

  test('no or bad token → 401 Status before anything reaches the kube-apiserver', async () => {
    const before = await proxyRequestCount(server, dispatcher);
    for (const headers of [
      {},
      { Authorization: 'Bearer not-a-token' },
      { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    ]) {
      const res = await fetch(`${server.url}/api/v1/nodes`, { headers, dispatcher });
      assert.equal(res.status, 401);
      assert.ok(res.headers.get('www-authenticate')?.startsWith('Bearer'));
      assert.equal(((await res.json()) as { kind: string }).kind, 'Status');
    }
    assert.equal(await proxyRequestCount(server, dispatcher), before, 'nothing was proxied');
    // And a proxied request does count, so the comparison above could fail.
    await fetch(`${server.url}/api/v1/nodes`, {
      headers: { Authorization: `Bearer ${tokens.viewer}` },
      dispatcher,
    });
    assert.equal(await proxyRequestCount(server, dispatcher), before + 1);
  });

  test('the proxied path cannot escape the Kubernetes API', async () => {
    const auth = { Authorization: `Bearer ${tokens.editor}` };
    for (const rawPath of [
      '/api/v1/../../metrics',
      '/api/%2e%2e/%2e%2e/healthz',
      '/apis/x/..%2f..%2flogs',
      '/api//v1/nodes',
    ]) {
      const res = await rawGet(server.url, rawPath, auth, tls.caPem);
      assert.equal(res.status, 400, rawPath);
      const body = JSON.parse(res.body) as { kind: string; message: string };
      assert.equal(body.kind, 'Status');
      assert.match(body.message, /invalid Kubernetes API path/);
    }
  });

  test('a WebSocket watch is proxied, authenticated by the Kubernetes bearer subprotocol', async () => {
    // As a browser would: the token travels in a subprotocol (no headers on WebSockets), Origin is set.
    const open = (token: string) => {
      const ws = new WebSocket(`${server.url.replace('https', 'wss')}/api/v1/nodes?watch=true`, {
        protocols: [
          `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`,
          'base64.binary.k8s.io',
        ],
        headers: { Origin: server.url },
        dispatcher,
      });
      ws.binaryType = 'arraybuffer';
      return ws;
    };
    // The kube-apiserver's watch handler sends each event as a JSON text frame.
    const frameText = (data: unknown) =>
      typeof data === 'string' ? data : Buffer.from(data as ArrayBuffer).toString('utf8');

    const ws = open(tokens.viewer);
    const events: string[] = [];
    ws.addEventListener('message', (e) => events.push(frameText(e.data)));
    try {
      await waitFor(
        'ADDED events over the WebSocket',
        () => (events.some((e) => e.includes('"proxy-0001"')) ? true : undefined),
        {
          timeoutMs: 15_000,
        },
      );
      assert.match(events[0] ?? '', /^\{"type":"ADDED"/);
      assert.equal(ws.protocol, 'base64.binary.k8s.io', 'the token subprotocol never reaches the upstream');
    } finally {
      ws.close();
    }

    const refused = open('forged');
    const outcome = await new Promise<string>((resolve) => {
      refused.addEventListener('open', () => resolve('open'));
      refused.addEventListener('error', () => resolve('error'));
    });
    assert.equal(outcome, 'error', 'a forged token does not get a WebSocket');
  });

  // http-proxy, which carries the WebSocket upgrades, calls the deprecated `util._extend` on the first one
  // (the WebSocket watch above); Node would print that as plain text on stderr, among the server's JSON lines.
  test('the proxy’s deprecation warning is one JSON log line, and the server writes nothing else', async () => {
    const warning = await waitFor(
      'the deprecation warning in the log',
      () => server.logs().find((l) => l['message'] === 'process warning' && l['code'] === 'DEP0060'),
      { timeoutMs: 10_000 },
    );
    assert.equal(warning['level'], 'warn');
    const notJson = server.output().filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    assert.deepEqual(notJson, []);
  });
});

describe('Kubernetes API proxy when the kube-apiserver fails', () => {
  // A private control plane: this test stops and freezes its apiserver.
  let cp: ControlPlane;
  let server: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;
  let token = '';

  before(async () => {
    cp = await startControlPlane();
    const kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await createUser(kc, VIEWER);
    await grantRbac(kc);
    keys = generateTestKeys();
    server = await startReadyServer([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      '--proxy.responseTimeoutSeconds=2',
    ]);
    token = await login(server.url, VIEWER);
  });
  after(async () => {
    for (const pid of cp?.pids ?? []) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
    await server?.stop();
    keys?.cleanup();
    await cp?.stop();
  });

  test('a watch stays open while idle far longer than the response timeout, and still delivers', async () => {
    const controller = new AbortController();
    const res = await fetch(`${server.url}/api/v1/nodes?watch=true&allowWatchBookmarks=false`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    let received = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of res.body as AsyncIterable<Uint8Array>)
        received += decoder.decode(chunk, { stream: true });
    })().catch(() => undefined);
    // The behaviour under test is the passing of time: three response timeouts with no traffic at all.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await adminKubeConfig(cp.kubeconfigPath)
      .makeApiClient(CoreV1Api)
      .createNode({ body: nodeFixture(7, { prefix: 'idle' }) });
    await waitFor(
      'the event after the idle period',
      () => (received.includes('"idle-0007"') ? true : undefined),
      { timeoutMs: 10_000 },
    );
    controller.abort();
    await reading;
  });

  test('a hung kube-apiserver → 504 Status within the configured timeout', async () => {
    const apiserverPid = cp.pids[1]!;
    process.kill(apiserverPid, 'SIGSTOP');
    try {
      const startedAt = Date.now();
      const res = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      const elapsedMs = Date.now() - startedAt;
      assert.equal(res.status, 504);
      const body = (await res.json()) as { kind: string; reason: string; message: string };
      assert.equal(body.kind, 'Status');
      assert.equal(body.reason, 'Timeout');
      assert.match(body.message, /did not answer within 2000 ms/);
      assert.ok(elapsedMs >= 1900 && elapsedMs < 6000, `answered after ${elapsedMs} ms`);
    } finally {
      process.kill(apiserverPid, 'SIGCONT');
    }
  });

  test('a stopped kube-apiserver → 503 Status at once', async () => {
    await cp.stopApiserver();
    const startedAt = Date.now();
    const res = await fetch(`${server.url}/api/v1/namespaces/default/configmaps`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 503);
    const body = (await res.json()) as { kind: string; reason: string; message: string };
    assert.equal(body.kind, 'Status');
    assert.equal(body.reason, 'ServiceUnavailable');
    assert.match(body.message, /kube-apiserver is unreachable/);
    assert.ok(Date.now() - startedAt < 2000);
  });
});
