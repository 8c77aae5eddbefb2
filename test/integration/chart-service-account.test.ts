import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { hashPassword } from '../../src/users/passwords.ts';
import type { ControlPlane } from '../cluster/control-plane.ts';
import { createNodes, deleteNodes } from '../cluster/node-fixtures.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { ChartTools, chartDir } from '../support/chart-tools.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { deleteReconciled } from '../support/tenant-fixtures.ts';

const cp: ControlPlane = await testControlPlane();

const RELEASE = 'chart-sa';
const ADMIN = 'chart-sa-admin';
const NODE_PREFIX = 'chartsa';
const EXTERNAL_URL = 'https://platform.example.com';
const VIEWER = 'chart-sa-nobody';
const CREATOR = 'chart-sa-creator';
const WORKSPACE = 'chart-sa-ws';
const PROJECT = `chart-sa-project-${randomBytes(3).toString('hex')}`;

interface TokenResponse {
  access_token: string;
  token_type: string;
  refresh_token: string;
  expires_in: number;
}

/**
 * The chart installed for real, then the server started the way the chart's Pod starts it — the
 * rendered config file, the generated signing key and admin password — but with ONLY the chart's
 * ServiceAccount token (TokenRequest API) as its Kubernetes credential: the ClusterRole must be enough.
 */
describe("the server running with only the chart's ServiceAccount token", () => {
  let tools: ChartTools;
  let namespace: string;
  let server: ServerProcess;
  let adminPassword: string;
  let saKubeconfig: string;
  const nodeNames: string[] = [];

  const adminKc = () => {
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    return kc;
  };

  before(async () => {
    tools = new ChartTools(cp);
    namespace = await tools.createNamespace('chart-sa');
    await tools.helm([
      'install',
      RELEASE,
      chartDir,
      `--namespace=${namespace}`,
      '--set',
      `admin.username=${ADMIN}`,
      '--set',
      `externalBaseUrl=${EXTERNAL_URL}`,
    ]);

    const get = async (kind: string, name: string, jsonpath: string) =>
      tools.kubectl(['get', kind, name, `--namespace=${namespace}`, '-o', `jsonpath=${jsonpath}`]);
    const configFile = path.join(tools.dir, 'config.yaml');
    writeFileSync(configFile, await get('configmap', RELEASE, '{.data.config\\.yaml}'));
    const keyFile = path.join(tools.dir, 'signing-key.pem');
    const keyBase64 = await get('secret', `${RELEASE}-signing-keys`, '{.data.signing-key\\.pem}');
    writeFileSync(keyFile, Buffer.from(keyBase64, 'base64'), { mode: 0o600 });
    adminPassword = Buffer.from(
      await get('secret', `${RELEASE}-admin`, '{.data.password}'),
      'base64',
    ).toString();
    const passwordFile = path.join(tools.dir, 'admin-password');
    writeFileSync(passwordFile, adminPassword, { mode: 0o600 });

    const token = (await tools.kubectl(['create', 'token', RELEASE, `--namespace=${namespace}`])).trim();
    saKubeconfig = tools.writeKubeconfig('service-account', token);

    nodeNames.push(...(await createNodes(adminKc().makeApiClient(CoreV1Api), 3, { prefix: NODE_PREFIX })));

    // Flags win over the file: the Pod's mount paths and listen address are replaced by local ones.
    server = await startServerProcess([
      `--config=${configFile}`,
      `--kubernetes.kubeconfig=${saKubeconfig}`,
      `--auth.signingKeyFile=${keyFile}`,
      `--auth.bootstrapAdmin.passwordFile=${passwordFile}`,
      // Background work (expired sessions, lifted locks) runs with the same token, often enough to be seen.
      '--auth.sessionSweepIntervalSeconds=1',
    ]);
  });
  after(async () => {
    await server?.stop();
    await deleteNodes(adminKc().makeApiClient(CoreV1Api), NODE_PREFIX);
    await tools.helm(['uninstall', RELEASE, `--namespace=${namespace}`]);
    await tools.kubectl(['delete', 'users.iam.platform.io', ADMIN, VIEWER, CREATOR, '--ignore-not-found']);
    await deleteReconciled(adminKc(), 'platform', [WORKSPACE], [PROJECT]);
    await tools.deleteNamespace(namespace);
    tools.cleanup();
  });

  const login = async (password: string, username = ADMIN) =>
    fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username,
        password,
        client_id: 'platform',
        client_secret: 'platform',
      }),
    });
  const listNodes = (accessToken: string) =>
    fetch(`${server.url}/kapis/resources.platform.io/v1alpha3/nodes?name=${NODE_PREFIX}`, {
      headers: { Authorization: `Bearer ${accessToken}` },
    });

  test('it becomes ready: nodes, users and sessions are listed and watched with the token', async () => {
    const verbose = await waitFor('readiness', async () => {
      const res = await fetch(`${server.url}/readyz?verbose`);
      return res.status === 200 ? res.text() : undefined;
    });
    const checks = ['kube-apiserver', 'nodes-cache', 'users-cache', 'sessions-cache'];
    // The resources API's caches of workloads and services: read with the chart's list + watch.
    checks.push('deployments-cache', 'cronjobs-cache', 'services-cache');
    for (const check of checks) {
      assert.match(verbose, new RegExp(`\\[\\+\\]${check} ok`));
    }
  });

  test("it signs with the chart's generated key and announces the external URL from the values", async () => {
    assert.equal(
      server.logs().filter((l) => String(l['message']).includes('NO SIGNING KEY')).length,
      0,
      'not an ephemeral key',
    );
    const jwks = (await (await fetch(`${server.url}/oauth/keys`)).json()) as {
      keys: { kty: string; crv?: string }[];
    };
    assert.deepEqual(
      jwks.keys.map((k) => [k.kty, k.crv]),
      [['EC', 'P-256']],
    );
    const discovery = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as {
      token_endpoint: string;
    };
    assert.equal(discovery.token_endpoint, `${EXTERNAL_URL}/oauth/token`);
  });

  test('it created the first administrator from the mounted password, with the token', async () => {
    await waitFor('the first administrator', () =>
      server.logs().find((l) => l['message'] === 'first administrator created' && l['user'] === ADMIN),
    );
    const user = JSON.parse(await tools.kubectl(['get', 'users.iam.platform.io', ADMIN, '-o', 'json'])) as {
      spec: { password: string; groups: string[] };
    };
    assert.deepEqual(user.spec.groups, ['system:masters']);
    assert.match(user.spec.password, /^\$2[ab]\$\d\d\$/);
    assert.ok(!JSON.stringify(user).includes(adminPassword), 'only a hash is stored');
  });

  test('login with the generated admin password, node list, logout', async () => {
    const rejected = await login('not-the-password');
    assert.equal(rejected.status, 400);

    const res = await login(adminPassword);
    assert.equal(res.status, 200, await res.clone().text());
    const tokens = (await res.json()) as TokenResponse;
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(tokens.expires_in, 7200);

    // The SubjectAccessReview for the admin (group system:masters) is asked with the ServiceAccount token.
    const list = await waitFor('the new nodes in the list', async () => {
      const r = await listNodes(tokens.access_token);
      assert.equal(r.status, 200, await r.clone().text());
      const body = (await r.json()) as { items: { metadata: { name: string } }[]; totalItems: number };
      return body.totalItems === nodeNames.length ? body : undefined;
    });
    assert.deepEqual(list.items.map((n) => n.metadata.name).sort(), [...nodeNames].sort());

    const logout = await fetch(`${server.url}/oauth/logout`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    assert.equal(logout.status, 200, await logout.clone().text());
    // The session object is deleted with the token's rights; the access token is refused from then on.
    await waitFor('the token to be refused after logout', async () =>
      (await listNodes(tokens.access_token)).status === 401 ? true : undefined,
    );
  });

  test('the Kubernetes API proxy acts as the caller, through the impersonation right of the token', async () => {
    const adminLogin = await login(adminPassword);
    assert.equal(adminLogin.status, 200);
    const adminToken = ((await adminLogin.json()) as TokenResponse).access_token;
    const viaProxy = (token: string) =>
      fetch(`${server.url}/api/v1/nodes?fieldSelector=metadata.name%3D${nodeNames[0]}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
    const asAdmin = await viaProxy(adminToken);
    assert.equal(asAdmin.status, 200, await asAdmin.clone().text());
    const nodes = (await asAdmin.json()) as { kind: string; items: { metadata: { name: string } }[] };
    assert.equal(nodes.kind, 'NodeList');
    assert.deepEqual(
      nodes.items.map((n) => n.metadata.name),
      [nodeNames[0]],
    );

    // A platform user with no Kubernetes rights: the ServiceAccount itself may list nodes, so a 403
    // naming the user shows the request went upstream as that user.
    const viewerPassword = randomBytes(12).toString('hex');
    const user = {
      apiVersion: 'iam.platform.io/v1alpha2',
      kind: 'User',
      metadata: { name: VIEWER },
      spec: { password: await hashPassword(viewerPassword, 10) },
    };
    await tools.kubectl(['apply'], { input: JSON.stringify(user) });
    const viewerToken = await waitFor('the new user to log in', async () => {
      const res = await login(viewerPassword, VIEWER);
      return res.status === 200 ? ((await res.json()) as TokenResponse).access_token : undefined;
    });
    const asViewer = await viaProxy(viewerToken);
    assert.equal(asViewer.status, 403);
    assert.match(
      ((await asViewer.json()) as { message: string }).message,
      new RegExp(`User "${VIEWER}" cannot list resource "nodes"`),
    );
  });

  test('the tenant reconciler works with the token: the Lease, a workspace, a project and its creator', async () => {
    // The chart points the server at the release's namespace for its Lease, where its Role allows it.
    await waitFor('the server to lead', async () =>
      /^platform_leader_is_leader 1$/m.test(await (await fetch(`${server.url}/metrics`)).text())
        ? true
        : undefined,
    );
    const lease = JSON.parse(
      await tools.kubectl(['get', 'lease', 'platform-apiserver', `--namespace=${namespace}`, '-o', 'json']),
    ) as { spec: { holderIdentity?: string } };
    assert.ok(lease.spec.holderIdentity);

    const creator = {
      apiVersion: 'iam.platform.io/v1alpha2',
      kind: 'User',
      metadata: { name: CREATOR },
      spec: { password: await hashPassword(randomBytes(12).toString('hex'), 10) },
    };
    await tools.kubectl(['apply'], { input: JSON.stringify(creator) });
    await tools.kubectl(['apply'], {
      input: JSON.stringify({
        apiVersion: 'tenant.platform.io/v1alpha2',
        kind: 'WorkspaceTemplate',
        metadata: { name: WORKSPACE },
        spec: { template: { spec: { manager: CREATOR } }, placement: {} },
      }),
    });
    await tools.kubectl(['apply'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: PROJECT,
          labels: { 'platform.io/workspace': WORKSPACE },
          annotations: { 'platform.io/creator': CREATOR },
        },
      }),
    });
    const exists = (kind: string, name: string, ns?: string) => async () => {
      const args = [
        'get',
        kind,
        name,
        '--ignore-not-found',
        '-o',
        'name',
        ...(ns ? [`--namespace=${ns}`] : []),
      ];
      return (await tools.kubectl(args)).trim() ? true : undefined;
    };
    await waitFor('the Workspace', exists('workspaces.tenant.platform.io', WORKSPACE));
    await waitFor(
      'the manager binding',
      exists('workspacerolebindings.iam.platform.io', `${WORKSPACE}-admin`),
    );
    await waitFor('the admin Role (all rights in the namespace)', exists('role', 'admin', PROJECT));
    await waitFor('the creator binding', exists('rolebinding', `${CREATOR}-admin`, PROJECT));
    const canCreator = await tools.kubectl([
      'auth',
      'can-i',
      'create',
      'deployments.apps',
      `--namespace=${PROJECT}`,
      `--as=${CREATOR}`,
    ]);
    assert.equal(canCreator.trim(), 'yes');

    // Deleting the workspace deletes its Workspace and namespace, with the token's rights.
    await tools.kubectl(['delete', 'workspacetemplates.tenant.platform.io', WORKSPACE, '--wait=false']);
    await waitFor('the template gone', async () =>
      (await exists('workspacetemplates.tenant.platform.io', WORKSPACE)()) ? undefined : true,
    );
    const ns = JSON.parse(await tools.kubectl(['get', 'namespace', PROJECT, '-o', 'json'])) as {
      metadata: { deletionTimestamp?: string };
    };
    assert.ok(ns.metadata.deletionTimestamp);
  });

  test('every request the server made on its own behalf was allowed', async () => {
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const series = metrics
      .split('\n')
      .filter((l) => l.startsWith('platform_upstream_request_duration_seconds_count{'));
    // source="client": informers, SubjectAccessReviews, user and session writes; "proxy": callers' requests.
    const own = series.filter((l) => l.includes('source="client"'));
    const codes = new Set(own.map((l) => /code="([^"]+)"/.exec(l)?.[1]));
    assert.ok(codes.has('200') && codes.has('201'), `reads and writes happened: ${[...codes].join(',')}`);
    assert.deepEqual(
      own.filter((l) => /code="40[13]"/.test(l)),
      [],
      'no request of the server was refused by the kube-apiserver',
    );
    // Through the proxy, only the user without rights was refused (once); the admin's request passed.
    assert.deepEqual(
      series
        .filter((l) => l.includes('source="proxy"'))
        .map((l) => l.replace(/^.*\{|\}.*$/g, ''))
        .sort(),
      ['source="proxy",verb="LIST",code="200"', 'source="proxy",verb="LIST",code="403"'],
    );
    assert.deepEqual(
      server
        .logs()
        .filter((l) => /cannot impersonate|forbidden/i.test(JSON.stringify(l)) && l['message'] !== 'request'),
      [],
    );
  });

  test('what the ClusterRole does not allow stays refused for the same token', async () => {
    await assert.rejects(
      tools.kubectl(['get', 'secrets', `--namespace=${namespace}`], { kubeconfig: saKubeconfig }),
      /Forbidden.*cannot list resource "secrets"/s,
    );
    await assert.rejects(
      tools.kubectl(['delete', 'node', nodeNames[0]!], { kubeconfig: saKubeconfig }),
      /Forbidden.*cannot delete resource "nodes"/s,
    );
  });
});
