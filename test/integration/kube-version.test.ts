// /version through the platform server is the kube-apiserver's: the real kubectl and helm binaries see
// the cluster's version (kubectl version; helm's .Capabilities.KubeVersion and a chart's kubeVersion).
// Also: 405 + Allow on known paths, and the Host-built discovery document is never publicly cacheable.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';
import { kubeRequest } from '../../src/cluster/kube-request.ts';
import type { ControlPlane } from '../cluster/control-plane.ts';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  installIamCrds,
} from '../support/iam-fixtures.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { makeServingCertificate, type TestCertificates } from '../support/test-certificates.ts';

const run = promisify(execFile);
const NS = 'kubeversion-test';
const USER = { name: 'kubeversion-kim', password: 'kim-Pa55word!', groups: [] as string[] };

function writeChart(dir: string, name: string, kubeVersion: string): string {
  const chart = path.join(dir, name);
  mkdirSync(path.join(chart, 'templates'), { recursive: true });
  writeFileSync(
    path.join(chart, 'Chart.yaml'),
    `apiVersion: v2\nname: ${name}\nversion: 0.1.0\nkubeVersion: "${kubeVersion}"\n`,
  );
  writeFileSync(
    path.join(chart, 'templates', 'configmap.yaml'),
    [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: {{ .Release.Name }}-kube',
      'data:',
      '  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}',
      '',
    ].join('\n'),
  );
  return chart;
}

describe('/version is the Kubernetes version: kubectl and helm through the platform server', () => {
  let cp: ControlPlane;
  let kc: KubeConfig;
  let server: ServerProcess;
  let withPublicUrl: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;
  let tls: TestCertificates;
  let dispatcher: Agent;
  let dir: string;
  let token = '';
  let kubeconfig = '';
  let clusterVersion: { gitVersion: string; major: string; minor: string };

  const helm = (args: string[]) =>
    run(cp.binaries.helm, [...args, '--kubeconfig', kubeconfig], {
      env: {
        ...process.env,
        HELM_CACHE_HOME: path.join(dir, 'helm-cache'),
        HELM_CONFIG_HOME: path.join(dir, 'helm-config'),
        HELM_DATA_HOME: path.join(dir, 'helm-data'),
      },
    });

  before(async () => {
    cp = await testControlPlane();
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [USER.name]);
    await createUser(kc, USER);
    const ignoreExists = (err: { code?: number }) => {
      if (err.code !== 409) throw err;
    };
    await kc
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: NS } } })
      .catch(ignoreExists);
    // Helm installs into the namespace (its release Secret and the chart's ConfigMap). Not the built-in
    // `admin` role: its rules are aggregated by kube-controller-manager, which this control plane lacks.
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac
      .createNamespacedRole({
        namespace: NS,
        body: {
          metadata: { name: 'kubeversion-helm' },
          rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['*'] }],
        },
      })
      .catch(ignoreExists);
    await rbac
      .createNamespacedRoleBinding({
        namespace: NS,
        body: {
          metadata: { name: 'kubeversion-helm' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kubeversion-helm' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USER.name }],
        },
      })
      .catch(ignoreExists);
    clusterVersion = await kubeRequest(kc, '/version', { timeoutMs: 10_000 });
    keys = generateTestKeys();
    tls = makeServingCertificate();
    dispatcher = new Agent({ connect: { ca: tls.caPem } });
    const common = [
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      `--http.tlsCertFile=${tls.certFile}`,
      `--http.tlsKeyFile=${tls.keyFile}`,
    ];
    // One after the other, so that after() stops whichever did start.
    server = await startServerProcess(common, { startTimeoutMs: 60_000 });
    withPublicUrl = await startServerProcess([...common, '--auth.publicUrl=https://platform.example.com'], {
      startTimeoutMs: 60_000,
    });
    for (const s of [server, withPublicUrl]) {
      await waitFor(
        'server /readyz',
        async () => ((await fetch(`${s.url}/readyz`, { dispatcher })).status === 200 ? true : undefined),
        { timeoutMs: 30_000 },
      );
    }
    const login = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      dispatcher,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: USER.name,
        password: USER.password,
        client_id: 'platform',
        client_secret: 'platform',
      }).toString(),
    });
    assert.equal(login.status, 200);
    token = ((await login.json()) as { access_token: string }).access_token;
    dir = mkdtempSync(path.join(os.tmpdir(), 'kubeversion-'));
    kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: platform',
        `  cluster: {server: "${server.url}", certificate-authority-data: "${Buffer.from(tls.caPem).toString('base64')}"}`,
        'users:',
        `- name: kim`,
        `  user: {token: "${token}"}`,
        'contexts:',
        `- name: kim`,
        `  context: {cluster: platform, user: kim, namespace: ${NS}}`,
        'current-context: kim',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
  });

  after(async () => {
    await Promise.all([server?.stop(), withPublicUrl?.stop()]);
    if (kc) {
      await deleteUsersAndSessions(kc, [USER.name]);
      await kc
        .makeApiClient(CoreV1Api)
        .deleteNamespace({ name: NS })
        .catch(() => undefined);
    }
    keys?.cleanup();
    tls?.cleanup();
    await dispatcher?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('kubectl version reports the kube-apiserver’s version', async () => {
    const { stdout } = await run(cp.binaries.kubectl, ['--kubeconfig', kubeconfig, 'version', '-o', 'json']);
    const versions = JSON.parse(stdout) as { serverVersion?: { gitVersion?: string } };
    assert.equal(versions.serverVersion?.gitVersion, clusterVersion.gitVersion);
    assert.equal(clusterVersion.gitVersion, `v${cp.binaries.kubeVersion.replace(/^v/, '')}`);
  });

  test('helm sees .Capabilities.KubeVersion: template --validate and install of a chart with a kubeVersion constraint', async () => {
    const chart = writeChart(dir, 'needs-kube', '>= 1.20.0-0');
    const rendered = await helm(['template', 'tpl', chart, '--validate', '--namespace', NS]);
    assert.match(rendered.stdout, new RegExp(`kubeVersion: "${clusterVersion.gitVersion}"`));

    await helm(['install', 'kv', chart, '--namespace', NS, '--wait=false']);
    try {
      const cm = await kc
        .makeApiClient(CoreV1Api)
        .readNamespacedConfigMap({ name: 'kv-kube', namespace: NS });
      assert.equal(cm.data?.['kubeVersion'], clusterVersion.gitVersion);
    } finally {
      await helm(['uninstall', 'kv', '--namespace', NS]);
    }

    // The constraint is checked against the real version (an empty one would not name it).
    const tooNew = writeChart(dir, 'needs-ancient-kube', '< 1.0.0');
    await assert.rejects(helm(['install', 'old', tooNew, '--namespace', NS]), (err: { stderr: string }) =>
      err.stderr.includes(`incompatible with Kubernetes ${clusterVersion.gitVersion}`),
    );
  });

  test('anonymous callers get the version too (Kubernetes’ public-info-viewer); a bad token is a 401', async () => {
    const anonymous = await fetch(`${server.url}/version`, { dispatcher });
    assert.equal(anonymous.status, 200);
    const body = (await anonymous.json()) as Record<string, unknown>;
    assert.equal(body['gitVersion'], clusterVersion.gitVersion);
    assert.equal(body['major'], clusterVersion.major);
    assert.equal(body['platform'] === 'platform', false, 'not the platform’s own version document');

    const bad = await fetch(`${server.url}/version`, {
      dispatcher,
      headers: { Authorization: 'Bearer not-a-token' },
    });
    assert.equal(bad.status, 401);
    assert.match(
      bad.headers.get('www-authenticate') ?? '',
      /^Bearer realm="platform", error="invalid_token"/,
    );
    assert.equal(((await bad.json()) as { kind: string }).kind, 'Status');
  });

  test('a known path asked with another method: 405 with Allow, as a Status', async () => {
    const auth = { Authorization: `Bearer ${token}` };
    const cases: [string, string, Record<string, string>, string][] = [
      ['DELETE', '/healthz', {}, 'GET, HEAD'],
      ['POST', '/version', {}, 'GET, HEAD'],
      ['PUT', '/.well-known/openid-configuration', {}, 'GET, HEAD'],
      ['POST', '/kapis/resources.platform.io/v1alpha3/nodes', auth, 'GET, HEAD'],
      ['DELETE', '/kapis/resources.platform.io/v1alpha3/nodes/some-node', auth, 'GET, HEAD'],
    ];
    for (const [method, p, headers, allow] of cases) {
      const res = await fetch(`${server.url}${p}`, { method, headers, dispatcher });
      assert.equal(res.status, 405, `${method} ${p}`);
      assert.equal(res.headers.get('allow'), allow, `${method} ${p}`);
      const status = (await res.json()) as { kind: string; reason: string; code: number };
      assert.deepEqual([status.kind, status.reason, status.code], ['Status', 'MethodNotAllowed', 405]);
    }
    // Authentication still comes first on protected paths, as in the kube-apiserver.
    const anonymous = await fetch(`${server.url}/kapis/resources.platform.io/v1alpha3/nodes`, {
      method: 'POST',
      dispatcher,
    });
    assert.equal(anonymous.status, 401);
    // An unknown path stays a 404.
    const unknown = await fetch(`${server.url}/kapis/nowhere`, { method: 'POST', headers: auth, dispatcher });
    assert.equal(unknown.status, 404);
  });

  test('discovery built from the Host header is private and varies by Host; with auth.publicUrl it is public', async () => {
    const fromHost = await fetch(`${server.url}/.well-known/openid-configuration`, { dispatcher });
    assert.equal(fromHost.headers.get('cache-control'), 'private, no-store');
    assert.match(fromHost.headers.get('vary') ?? '', /\bHost\b/);
    assert.equal(
      ((await fromHost.json()) as { token_endpoint: string }).token_endpoint,
      `${server.url}/oauth/token`,
    );

    const configured = await fetch(`${withPublicUrl.url}/.well-known/openid-configuration`, { dispatcher });
    assert.equal(configured.headers.get('cache-control'), 'public, max-age=300');
    assert.equal(
      ((await configured.json()) as { token_endpoint: string }).token_endpoint,
      'https://platform.example.com/oauth/token',
    );
  });
});
