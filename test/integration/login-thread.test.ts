// The password grant on a thread of its own (auth.loginThread, issue 36): what a client and an operator
// see is the same as when the main thread serves it — the login, its errors, its log line (with the
// request's id), its metrics on /metrics (once per family) — and a graceful stop lets the thread write
// what it holds. With `auth.loginThread=false` the main thread serves the grant.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  IAM,
  installIamCrds,
  passwordLogin,
  startReadyServer,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const PASSWORD = 'thread-Pa55word!';
const USER = `login-thread-${randomBytes(3).toString('hex')}`;

const metricsOf = async (server: ServerProcess) => (await fetch(`${server.url}/metrics`)).text();
const sample = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN);
const loginLines = (server: ServerProcess) => server.logs().filter((l) => l['message'] === 'login');

describe('login thread', () => {
  let kc: KubeConfig;
  let kubeconfigPath: string;
  let keys: ReturnType<typeof generateTestKeys>;
  const servers: ServerProcess[] = [];
  const start = async (extra: string[]) => {
    const server = await startReadyServer([
      `--kubernetes.kubeconfig=${kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      ...extra,
    ]);
    servers.push(server);
    return server;
  };

  before(async () => {
    const cp = await testControlPlane();
    kubeconfigPath = cp.kubeconfigPath;
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [USER]);
    await createUser(kc, { name: USER, password: PASSWORD, groups: [] });
    keys = generateTestKeys();
  });

  after(async () => {
    for (const server of servers) await server.stop();
    await deleteUsersAndSessions(kc, [USER]);
    keys?.cleanup();
  });

  test('serves the password grant: tokens that work at once, errors in RFC 6749 form, its log line', async () => {
    // Started by startReadyServer only once the thread serves logins.
    const server = await start(['--auth.loginThread=true']);
    assert.match(await metricsOf(server), /^platform_login_thread_ready 1$/m);
    const login = await passwordLogin(server.url, USER, PASSWORD);
    assert.equal(login.status, 200, JSON.stringify(login.body));
    assert.equal(login.body['token_type'], 'Bearer');
    // The main thread has not necessarily seen the session's watch event yet: it reads it through.
    const me = await fetch(`${server.url}/oauth/userinfo`, {
      headers: { Authorization: `Bearer ${String(login.body['access_token'])}` },
    });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { username: string }).username, USER);

    const wrong = await passwordLogin(server.url, USER, 'not-the-password');
    assert.equal(wrong.status, 400);
    assert.deepEqual(wrong.body, {
      error: 'invalid_grant',
      error_description: 'invalid username or password',
    });

    const requestId = login.headers.get('x-request-id');
    const line = await waitFor('the login log line', () =>
      loginLines(server).find((l) => l['outcome'] === 'success' && l['user'] === USER),
    );
    assert.equal(line['thread'], 'login');
    assert.equal(line['requestId'], requestId);
    assert.equal(JSON.stringify(server.logs()).includes(PASSWORD), false);
  });

  test("/metrics exports the thread's metrics with the main thread's, each family once", async () => {
    const server = await start(['--auth.loginThread=true']);
    assert.equal((await passwordLogin(server.url, USER, PASSWORD)).status, 200);
    const text = await metricsOf(server);
    const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    assert.deepEqual(
      families.filter((name, i) => families.indexOf(name) !== i),
      [],
      'a family exported twice',
    );
    // Observed only on the login thread.
    assert.equal(sample(text, /^platform_password_verify_duration_seconds_count (\d+)$/m), 1);
    assert.equal(
      sample(text, /^platform_oauth_token_requests_total\{grant_type="password",outcome="success"\} (\d+)$/m),
      1,
    );
    // The thread's caches apart from the main thread's, and one sessions gauge.
    const users = `users.${IAM.group}`;
    assert.ok(
      sample(text, new RegExp(`^platform_cache_objects\\{kind="login-thread/${users}"\\} (\\d+)$`, 'm')) >= 1,
    );
    assert.ok(sample(text, new RegExp(`^platform_cache_objects\\{kind="${users}"\\} (\\d+)$`, 'm')) >= 1);
    assert.equal(text.match(/^platform_auth_sessions_active /gm)?.length, 1);
    // The thread's own heap, which the process's nodejs_heap_* families leave out.
    const heapUsed = sample(text, /^platform_login_thread_heap_bytes\{state="used"\} (\d+)$/m);
    const heapTotal = sample(text, /^platform_login_thread_heap_bytes\{state="total"\} (\d+)$/m);
    assert.ok(heapUsed > 1_000_000 && heapUsed <= heapTotal, `used ${heapUsed}, total ${heapTotal}`);
    assert.notEqual(
      heapTotal,
      sample(text, /^nodejs_heap_size_total_bytes (\d+)$/m),
      "the main thread's heap",
    );
    // Kube-apiserver requests of both threads, summed: the thread's session create is among them.
    assert.ok(
      sample(text, /^platform_upstream_request_duration_seconds_count\{[^}]*verb="POST"[^}]*\} (\d+)$/m) >= 1,
    );
  });

  test('a graceful stop ends the thread cleanly, after its logins', async () => {
    const server = await start(['--auth.loginThread=true']);
    const logins = await Promise.all([1, 2, 3].map(() => passwordLogin(server.url, USER, PASSWORD)));
    assert.deepEqual(
      logins.map((l) => l.status),
      [200, 200, 200],
    );
    assert.equal(await server.stop(), 0);
    const errors = server.logs().filter((l) => l['level'] === 'error');
    assert.deepEqual(errors, []);
  });

  test('with auth.loginThread=false the main thread serves the grant', async () => {
    const server = await start(['--auth.loginThread=false']);
    assert.equal((await passwordLogin(server.url, USER, PASSWORD)).status, 200);
    const line = await waitFor('the login log line', () =>
      loginLines(server).find((l) => l['outcome'] === 'success'),
    );
    assert.equal(line['thread'], undefined);
    const text = await metricsOf(server);
    assert.equal(sample(text, /^platform_password_verify_duration_seconds_count (\d+)$/m), 1);
    assert.doesNotMatch(text, /login-thread\/|platform_login_thread_ready/);
  });
});
