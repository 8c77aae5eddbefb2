import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { FORBIDDEN_LABELS } from '../../src/observability/metrics.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { adminKubeConfig, installIamCrds } from '../support/iam-fixtures.ts';
import { testControlPlane } from '../support/shared-cluster.ts';
import { promtoolPath } from '../tools/promtool.ts';
import { sampleSum } from '../support/metrics-exposition.ts';

function promtoolCheck(promtool: string, exposition: string): { status: number | null; output: string } {
  const result = spawnSync(promtool, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

// At the top level, so a private control plane (file run alone) is stopped after all tests of the file.
const cp = await testControlPlane();

describe('GET /metrics of the real server', () => {
  let server: ServerProcess;
  let promtool: string;
  before(async () => {
    promtool = promtoolPath();
    // Readiness waits for the user and session caches, which need the IAM CRDs.
    await installIamCrds(adminKubeConfig(cp.kubeconfigPath));
    // With the login thread (the default, named here since the test depends on it), so that every
    // documented metric is exported, the thread's merged into the main thread's and checked by promtool.
    server = await startServerProcess([
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      '--auth.loginThread=true',
    ]);
    await waitFor('server ready', async () => ((await fetch(`${server.url}/readyz`)).ok ? true : undefined));
    await waitFor('the login thread', async () =>
      /^platform_login_thread_ready 1$/m.test(await (await fetch(`${server.url}/metrics`)).text())
        ? true
        : undefined,
    );
  });
  after(() => server?.stop());

  test('promtool itself rejects a badly named metric (the check below is real)', () => {
    const bad = '# HELP demo_total x\n# TYPE demo_total gauge\ndemo_total 1\n';
    const result = promtoolCheck(promtool, bad);
    assert.equal(result.status, 3, result.output);
    assert.match(result.output, /non-counter metrics should not have "_total" suffix/);
  });

  test('the scrape passes `promtool check metrics` and counts requests by route template, never raw paths', async () => {
    const secretish = randomBytes(16).toString('hex');
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${server.url}/version`)).status, 200);
    // Without a token, authentication answers before routing: 401, counted as unmatched.
    assert.equal((await fetch(`${server.url}/no/such/${secretish}?token=${secretish}`)).status, 401);
    assert.equal(
      (await fetch(`${server.url}/apis/${secretish}/v1/things`, { method: 'DELETE' })).status,
      401,
    );

    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();

    const check = promtoolCheck(promtool, text);
    assert.equal(check.status, 0, `promtool check metrics failed:\n${check.output}`);
    assert.equal(check.output.trim(), '', 'no lint findings');

    const http = 'platform_http_requests_total';
    assert.ok(sampleSum(text, http, { verb: 'GET', route: '/healthz', code: '200', group: '' }) >= 1);
    assert.ok(sampleSum(text, http, { verb: 'GET', route: '/version', code: '200' }) >= 1);
    assert.ok(sampleSum(text, http, { verb: 'GET', route: 'unmatched', code: '401' }) >= 1);
    assert.ok(sampleSum(text, http, { verb: 'DELETECOLLECTION', route: 'unmatched', code: '401' }) >= 1);
    assert.ok(sampleSum(text, 'platform_bearer_authentications_total', { outcome: 'missing' }) >= 2);
    assert.ok(sampleSum(text, 'platform_http_request_duration_seconds_count', { route: '/healthz' }) >= 1);
    assert.ok(!text.includes(secretish), 'no client-chosen path segment or query value in any label');

    // First contact with the kube-apiserver (GET /version) went through the instrumented client.
    assert.ok(
      sampleSum(text, 'platform_upstream_request_duration_seconds_count', {
        source: 'client',
        verb: 'GET',
        code: '200',
      }) >= 1,
      'upstream request observed',
    );
    assert.match(text, /^process_cpu_seconds_total /m);
    assert.match(text, /^nodejs_heap_size_used_bytes /m);
  });

  test('no label name could carry a secret or an unbounded value, whoever registered the metric', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const labelNames = new Set(
      [...text.matchAll(/^[a-zA-Z_:][\w:]*\{([^}]*)\}/gm)].flatMap((m) =>
        [...m[1]!.matchAll(/(\w+)="/g)].map((l) => l[1]!),
      ),
    );
    assert.ok(labelNames.has('route'), 'labels were parsed');
    assert.deepEqual(
      [...labelNames].filter((l) => FORBIDDEN_LABELS.has(l)),
      [],
    );
  });

  test('the metrics table in docs/metrics.md lists exactly the platform_* metrics the server exports', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const exported = [...text.matchAll(/^# TYPE (platform_\w+) /gm)].map((m) => m[1]!).sort();
    const page = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
    const documented = [...page.matchAll(/^\| `(platform_\w+)` \|/gm)].map((m) => m[1]!).sort();
    assert.ok(exported.length >= 3, `exported: ${exported.join(', ')}`);
    assert.deepEqual(documented, exported, 'update the table in docs/metrics.md');
  });

  test('a scrape is counted too, under its own route', async () => {
    await fetch(`${server.url}/metrics`);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    assert.ok(sampleSum(text, 'platform_http_requests_total', { route: '/metrics', code: '200' }) >= 1);
  });
});
