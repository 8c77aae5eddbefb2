// What the proxy sends upstream. A recording pass-through sits between the platform server and the real
// kube-apiserver (test/support/recording-upstream.ts): it sees every header line exactly as the
// kube-apiserver would and forwards it unchanged, so the real kube-apiserver still answers. Requests a
// normal client cannot send (duplicate headers, odd header case) are written on raw sockets.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { WebSocket } from 'undici';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import {
  startRecordingUpstream,
  type RecordedRequest,
  type RecordingUpstream,
} from '../support/recording-upstream.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { makeServingCertificate, type TestCertificates } from '../support/test-certificates.ts';

const USER = { name: 'hygiene-hal', password: 'hal-Pa55word!', groups: ['hygiene-group'] };

const WATCHER_ROLE = 'hygiene-namespace-watcher';

/** The user's group may watch namespaces (the WebSocket test's stream). */
async function grantNamespaceWatch(kc: KubeConfig): Promise<void> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const ignoreExists = (err: { code?: number }) => {
    if (err.code !== 409) throw err;
  };
  await rbac
    .createClusterRole({
      body: {
        metadata: { name: WATCHER_ROLE },
        rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] }],
      },
    })
    .catch(ignoreExists);
  await rbac
    .createClusterRoleBinding({
      body: {
        metadata: { name: WATCHER_ROLE },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: WATCHER_ROLE },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'hygiene-group' }],
      },
    })
    .catch(ignoreExists);
}

/** Sends `head` (request line and header lines, CRLF-separated) on a raw socket; resolves with the whole answer. */
function rawRequest(url: string, head: string[]): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(`${head.join('\r\n')}\r\n\r\n`));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (data += c));
    socket.on('error', reject);
    socket.on('end', () => {
      const [headers = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0), headers, body });
    });
  });
}

/** The recorded request carrying our marker header (each test sends a fresh one). */
function recorded(upstream: RecordingUpstream, marker: string): RecordedRequest | undefined {
  return upstream.requests.find((r) => headerValues(r, 'x-test-marker').includes(marker));
}

function headerValues(r: RecordedRequest, name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < r.rawHeaders.length; i += 2)
    if (r.rawHeaders[i]!.toLowerCase() === name) values.push(r.rawHeaders[i + 1]!);
  return values;
}

describe('proxy header hygiene, as the kube-apiserver receives the request', () => {
  let kc: KubeConfig;
  let server: ServerProcess;
  let upstream: RecordingUpstream;
  let keys: ReturnType<typeof generateTestKeys>;
  let tls: TestCertificates;
  let dir: string;
  let token = '';
  let adminToken = '';

  before(async () => {
    const cp = await testControlPlane();
    adminToken = cp.admin.token;
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [USER.name]);
    await createUser(kc, USER);
    await grantNamespaceWatch(kc);
    dir = mkdtempSync(path.join(os.tmpdir(), 'hygiene-'));
    tls = makeServingCertificate();
    upstream = await startRecordingUpstream(cp, tls, dir);
    keys = generateTestKeys();
    server = await startReadyServer(
      [
        `--kubernetes.kubeconfig=${upstream.kubeconfigPath}`,
        `--auth.signingKeyFile=${keys.es256}`,
        '--auth.addressRequestsPerMinute=0',
      ],
      { startTimeoutMs: 60_000 },
    ); // a loaded machine may start slowly
    const login = await passwordLogin(server.url, USER.name, USER.password);
    assert.equal(login.status, 200);
    token = login.body['access_token'] as string;
  });

  after(async () => {
    await server?.stop();
    await upstream?.close();
    if (kc) {
      await deleteUsersAndSessions(kc, [USER.name]);
      const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
      await rbac.deleteClusterRoleBinding({ name: WATCHER_ROLE }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: WATCHER_ROLE }).catch(() => undefined);
    }
    keys?.cleanup();
    tls?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('client-sent X-Remote-*, Impersonate-* and the caller’s token never reach the kube-apiserver', async () => {
    const marker = randomUUID();
    const { hostname, port } = new URL(server.url);
    const answer = await rawRequest(server.url, [
      'GET /api/v1/namespaces/kube-system/secrets HTTP/1.1',
      `Host: ${hostname}:${port}`,
      `Authorization: Bearer ${token}`,
      `X-Test-Marker: ${marker}`,
      // Every spelling a requestheader-trusting kube-apiserver would read as the caller's identity.
      'X-Remote-User: admin',
      'x-remote-group: system:masters',
      'X-REMOTE-GROUP: system:masters',
      'X-Remote-Extra-Scopes: everything',
      'x-ReMoTe-UiD: 0',
      'Impersonate-User: admin',
      'Impersonate-Group: system:masters',
      'Connection: close',
    ]);
    // The kube-apiserver decided as the platform user: no escalation.
    assert.equal(answer.status, 403, answer.body);
    assert.match(answer.body, /User \\?"hygiene-hal\\?" cannot list resource \\?"secrets\\?"/);

    const seen = recorded(upstream, marker);
    assert.ok(seen, 'the request reached the upstream');
    const names = seen.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    assert.deepEqual(
      names.filter((n) => n.startsWith('x-remote-')),
      [],
      `forwarded: ${names.join(', ')}`,
    );
    assert.deepEqual(headerValues(seen, 'impersonate-user'), [USER.name]);
    // system:authenticated is added by the kube-apiserver itself: naming it would cost a check per request.
    assert.deepEqual(headerValues(seen, 'impersonate-group'), ['hygiene-group']);
    assert.deepEqual(
      headerValues(seen, 'authorization'),
      [`Bearer ${adminToken}`],
      'only the server’s own credential',
    );
    assert.ok(!seen.rawHeaders.some((v) => v.includes(token)), 'the platform token is in no header');
  });

  test('two Authorization headers are a 400 Status, on the API and on an upgrade, and nothing goes upstream', async () => {
    const { hostname, port } = new URL(server.url);
    for (const upgrade of [false, true]) {
      const marker = randomUUID();
      const answer = await rawRequest(server.url, [
        'GET /api/v1/namespaces?watch=true HTTP/1.1',
        `Host: ${hostname}:${port}`,
        `Authorization: Bearer ${token}`,
        'authorization: Bearer someone-elses-token',
        `X-Test-Marker: ${marker}`,
        ...(upgrade
          ? [
              'Connection: Upgrade',
              'Upgrade: websocket',
              'Sec-WebSocket-Version: 13',
              'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
            ]
          : ['Connection: close']),
      ]);
      assert.equal(answer.status, 400, `upgrade=${upgrade}: ${answer.headers}`);
      const status = JSON.parse(answer.body) as { kind: string; reason: string; message: string };
      assert.equal(status.kind, 'Status');
      assert.equal(status.reason, 'BadRequest');
      assert.match(status.message, /more than one Authorization header/);
      assert.equal(recorded(upstream, marker), undefined, `upgrade=${upgrade}: nothing proxied`);
    }
    // Under /oauth/ the same refusal is RFC 6749 JSON.
    const oauth = await rawRequest(server.url, [
      'POST /oauth/logout HTTP/1.1',
      `Host: ${hostname}:${port}`,
      `Authorization: Bearer ${token}`,
      'Authorization: Bearer x',
      'Content-Length: 0',
      'Connection: close',
    ]);
    assert.equal(oauth.status, 400);
    assert.equal((JSON.parse(oauth.body) as { error: string }).error, 'invalid_request');
  });

  test('the bearer-token subprotocol never goes upstream, also when the Authorization header carries the token', async () => {
    const carrier = `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`;
    for (const withHeader of [true, false]) {
      const marker = randomUUID();
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/v1/namespaces?watch=true`, {
        protocols: [carrier, 'base64.binary.k8s.io'],
        headers: {
          Origin: server.url,
          'X-Test-Marker': marker,
          'X-Remote-User': 'admin',
          ...(withHeader ? { Authorization: `Bearer ${token}` } : {}),
        },
      });
      const events: string[] = [];
      ws.addEventListener('message', (e) =>
        events.push(typeof e.data === 'string' ? e.data : Buffer.from(e.data as ArrayBuffer).toString()),
      );
      try {
        await waitFor(`events over the WebSocket (header: ${withHeader})`, () =>
          events.length > 0 ? true : undefined,
        );
        assert.equal(ws.protocol, 'base64.binary.k8s.io');
      } finally {
        ws.close();
      }
      const seen = recorded(upstream, marker);
      assert.ok(seen, 'the upgrade reached the upstream');
      assert.deepEqual(headerValues(seen, 'sec-websocket-protocol'), ['base64.binary.k8s.io']);
      assert.deepEqual(headerValues(seen, 'x-remote-user'), []);
      assert.deepEqual(headerValues(seen, 'authorization'), [`Bearer ${adminToken}`]);
      assert.ok(!seen.rawHeaders.some((v) => v.includes(token) || v.includes(carrier.slice(-40))));
    }
  });
});
