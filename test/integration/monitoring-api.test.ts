import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NOT_CONFIGURED } from '../../src/monitoring/unconfigured-metrics.ts';
import type { ServerProcess } from '../support/server-process.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import {
  bindWorkspaceMember,
  createWorkspace,
  createWorkspaceNamespace,
  deleteWorkspaces,
  installTenantCrds,
} from '../support/tenant-fixtures.ts';

const P = 'monco';
const WORKSPACES = ['mon-ws1', 'mon-ws2'] as const;
const USER = { name: 'mon-mia', password: 'Mia-Pa55word!', groups: [] as string[] };

const cp = await testControlPlane();
const kc = adminKubeConfig(cp.kubeconfigPath);

describe('monitoring API without a metrics backend (real server)', () => {
  let server: ServerProcess;
  let token: string;
  const base = `/kapis/monitoring.${P}.io/v1alpha3`;
  const get = (path: string, auth = true) =>
    fetch(`${server.url}${base}${path}`, auth ? { headers: { Authorization: `Bearer ${token}` } } : {});
  const metrics = async (path: string) => {
    const res = await get(path);
    assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
    return (await res.json()) as { results: { metric_name: string; data: object; error: string }[] };
  };

  before(async () => {
    await installIamCrds(kc, P);
    await deleteUsersAndSessions(kc, [USER.name], P);
    await createUser(kc, USER, P);
    await installTenantCrds(kc, P);
    await deleteWorkspaces(kc, P, [...WORKSPACES]);
    for (const ws of WORKSPACES) await createWorkspace(kc, P, ws);
    await bindWorkspaceMember(kc, P, WORKSPACES[0], { kind: 'User', name: USER.name });
    await createWorkspaceNamespace(kc, P, WORKSPACES[0], 'mon-ns1');
    server = await startReadyServer([`--kubernetes.kubeconfig=${cp.kubeconfigPath}`, `--platformName=${P}`]);
    const login = await passwordLogin(server.url, USER.name, USER.password, { id: P, secret: P });
    assert.equal(login.status, 200);
    token = String(login.body['access_token']);
  });
  after(async () => {
    await server?.stop();
    await deleteUsersAndSessions(kc, [USER.name], P);
    await deleteWorkspaces(kc, P, [...WORKSPACES]);
  });

  test("the Nodes page's query (N6): every requested metric, each with the not-configured error", async () => {
    const requested = [
      'node_cpu_usage',
      'node_cpu_total',
      'node_cpu_utilisation',
      'node_memory_usage_wo_cache',
      'node_memory_total',
      'node_memory_utilisation',
      'node_pod_running_count',
      'node_pod_quota',
    ];
    const query = new URLSearchParams({
      cluster: 'default',
      resources_filter: 'node-1|node-2$',
      metrics_filter: `${requested.join('|')}$`,
    });
    const body = await metrics(`/nodes?${query}`);
    assert.deepEqual(
      body.results.map((r) => r.metric_name),
      requested,
    );
    for (const r of body.results) {
      assert.equal(r.error, NOT_CONFIGURED);
      assert.deepEqual(r.data, {});
    }
  });

  test('a node over time (D2), a namespace, workloads, pods: the same shape on each route', async () => {
    const node = await metrics(
      '/nodes?start=1700000000&end=1700003600&step=180s&times=20&resources_filter=n1$&metrics_filter=node_cpu_utilisation|node_memory_utilisation$',
    );
    assert.deepEqual(
      node.results.map((r) => r.metric_name),
      ['node_cpu_utilisation', 'node_memory_utilisation'],
    );
    for (const path of [
      '/namespaces/demo?metrics_filter=namespace_cpu_usage$',
      '/namespaces/demo/workloads/deployment?metrics_filter=workload_cpu_usage$',
      '/namespaces/demo/pods?metrics_filter=pod_cpu_usage$',
      '/cluster?metrics_filter=cluster_cpu_usage$',
      '/components/apiserver?metrics_filter=apiserver_request_rate$',
    ]) {
      const body = await metrics(path);
      assert.equal(body.results.length, 1, path);
      assert.equal(body.results[0]!.error, NOT_CONFIGURED, path);
    }
    // A pattern names no metric here: no results, still 200.
    assert.deepEqual((await metrics('/cluster?metrics_filter=cluster_.*')).results, []);
  });

  test("the platform's counts are real: one cluster, the workspaces, the users", async () => {
    const res = await get('/kubesphere');
    assert.equal(res.status, 200);
    const body = (await res.json()) as {
      results: { metric_name: string; data: { result?: { value: [number, string] }[] }; error?: string }[];
    };
    const count = (name: string) => {
      const metric = body.results.find((r) => r.metric_name === name);
      assert.ok(metric && !metric.error, `${name}: ${JSON.stringify(metric)}`);
      return metric.data.result?.[0]?.value[1];
    };
    assert.equal(count('kubesphere_cluser_count'), '1');
    assert.equal(count('kubesphere_workspace_count'), '2');
    assert.equal(count('kubesphere_user_count'), '1');
    assert.equal(body.results.length, 3, 'no app template count without an app store');
  });

  test("a workspace's counts are real, for whom may see the workspace", async () => {
    const res = await get(`/workspaces/${WORKSPACES[0]}?type=statistics`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as {
      results: { metric_name: string; data: { result?: { value: [number, string] }[] }; error?: string }[];
    };
    const byName = Object.fromEntries(body.results.map((r) => [r.metric_name, r]));
    assert.equal(byName['workspace_namespace_count']?.data.result?.[0]?.value[1], '1');
    assert.equal(byName['workspace_member_count']?.data.result?.[0]?.value[1], '1');
    // No WorkspaceRole CRD for this platform name: none.
    assert.equal(byName['workspace_role_count']?.data.result?.[0]?.value[1], '0');
    assert.match(byName['workspace_devops_project_count']?.error ?? '', /DevOps/);
    // Not a member of the other workspace, no RBAC on it: 403, as for the tenant API.
    assert.equal((await get(`/workspaces/${WORKSPACES[1]}?type=statistics`)).status, 403);
    // Statistics of no workspace in particular: the error per count.
    const none = await metrics('/workspaces?type=statistics');
    assert.ok(none.results.some((r) => r.metric_name === 'workspace_namespace_count'));
    assert.ok(none.results.every((r) => r.error === NOT_CONFIGURED));
  });

  test('authenticated like every route; a repeated metrics_filter is a 400 naming it', async () => {
    assert.equal((await get('/nodes?metrics_filter=node_cpu_usage$', false)).status, 401);
    const twice = await get('/nodes?metrics_filter=a$&metrics_filter=b$');
    assert.equal(twice.status, 400);
    assert.match(((await twice.json()) as { message: string }).message, /metrics_filter/);
  });
});
