// Brute-force protection: the per-account lockout counted in the cluster (shared by replicas) and the
// per-address limiter of the token endpoint.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '../cluster/wait-for.ts';
import {
  adminKubeConfig,
  createUser,
  deleteUsersAndSessions,
  generateTestKeys,
  getUser,
  installIamCrds,
  startReadyServer,
  passwordLogin,
} from '../support/iam-fixtures.ts';
import type { ServerProcess } from '../support/server-process.ts';
import { testControlPlane } from '../support/shared-cluster.ts';

const LOCKED = { name: 'lockout-lou', password: 'lou-Pa55word!', groups: [] as string[] };
const WINDOW_SECONDS = 3;

describe('brute-force protection', () => {
  let kc: KubeConfig;
  let a: ServerProcess;
  let b: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;
  let kubeconfigPath: string;

  before(async () => {
    const cp = await testControlPlane();
    kubeconfigPath = cp.kubeconfigPath;
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, [LOCKED.name]);
    await createUser(kc, LOCKED);
    keys = generateTestKeys();
    const args = [
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      '--auth.lockout.maxFailures=3',
      '--auth.sessionSweepIntervalSeconds=1',
      `--auth.lockout.windowSeconds=${WINDOW_SECONDS}`,
    ];
    [a, b] = await Promise.all([startReadyServer(args), startReadyServer(args)]);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await deleteUsersAndSessions(kc, [LOCKED.name]);
    keys?.cleanup();
  });

  test('failures counted across replicas lock the account (429 + Retry-After) until the window passes', async () => {
    // Two failures on A, one on B: the count lives on the User, so the third locks.
    for (const server of [a, a, b]) {
      const res = await passwordLogin(server.url, LOCKED.name, 'wrong password');
      assert.equal(res.status, 400);
      assert.equal(res.body['error'], 'invalid_grant');
    }
    // The count is written right after each answer (not before it, so answers for known and unknown users
    // take equally long).
    const status = await waitFor('account locked on the User', async () => {
      const s = (await getUser(kc, LOCKED.name)).status ?? {};
      return s['state'] === 'AuthLimitExceeded' ? s : undefined;
    });
    assert.equal(typeof status['lockedUntil'], 'string');

    // Refused even with the right password, on both replicas (B learns the lock through its watch).
    for (const server of [a, b]) {
      const locked = await waitFor(`${server.url} refuses the locked account`, async () => {
        const res = await passwordLogin(server.url, LOCKED.name, LOCKED.password);
        return res.status === 429 ? res : undefined;
      });
      assert.equal(locked.body['error'], 'invalid_grant');
      const retryAfter = Number(locked.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= WINDOW_SECONDS, `Retry-After ${retryAfter}`);
    }

    // When the window has passed, the replicas' sweepers turn the User back to Active by themselves.
    await waitFor(
      'user status back to Active after the window',
      async () => {
        const s = (await getUser(kc, LOCKED.name)).status ?? {};
        return s['state'] === 'Active' && s['recentFailedLogins'] === undefined && !s['lockedUntil']
          ? true
          : undefined;
      },
      { timeoutMs: (WINDOW_SECONDS + 5) * 1000, intervalMs: 250 },
    );
    const unlocked = await passwordLogin(b.url, LOCKED.name, LOCKED.password);
    assert.equal(unlocked.status, 200, JSON.stringify(unlocked.body));
    const logs = [...a.logs(), ...b.logs()];
    assert.equal(logs.filter((l) => l['message'] === 'account locked').length, 1);
    // Every attempt is logged with user, client, source address and reason — never the password.
    const failures = logs.filter((l) => l['message'] === 'login' && l['outcome'] === 'failure');
    assert.equal(failures.length, 3);
    for (const line of failures) {
      assert.equal(line['user'], LOCKED.name);
      assert.equal(line['client'], 'platform');
      assert.equal(line['reason'], 'wrong password');
      assert.match(String(line['sourceAddress']), /127\.0\.0\.1/);
    }
    assert.ok(logs.some((l) => l['message'] === 'login' && l['outcome'] === 'locked'));
    assert.ok(![...a.output(), ...b.output()].join('\n').includes(LOCKED.password));

    // And counted: lockouts, and token requests by outcome.
    const scrape = async () =>
      (await Promise.all([a, b].map(async (s) => (await fetch(`${s.url}/metrics`)).text()))).join('\n');
    const sum = (text: string, pattern: RegExp) =>
      [...text.matchAll(pattern)].reduce((total, m) => total + Number(m[1]), 0);
    const metrics = await scrape();
    assert.equal(sum(metrics, /^platform_login_lockouts_total (\d+)/gm), 1);
    assert.ok(
      sum(metrics, /^platform_oauth_token_requests_total\{[^}]*outcome="locked"[^}]*\} (\d+)/gm) >= 2,
    );
    assert.ok(
      sum(
        metrics,
        /^platform_oauth_token_requests_total\{grant_type="password",outcome="success"\} (\d+)/gm,
      ) >= 1,
    );
  });

  test('the per-address limiter answers 429 with Retry-After', async () => {
    const limited = await startReadyServer([
      `--kubernetes.kubeconfig=${kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=5',
    ]);
    try {
      for (let i = 0; i < 5; i++) {
        const res = await passwordLogin(limited.url, LOCKED.name, 'x', { id: 'platform', secret: 'wrong' });
        assert.equal(res.status, 401);
      }
      const res = await passwordLogin(limited.url, LOCKED.name, LOCKED.password);
      assert.equal(res.status, 429);
      assert.equal(res.body['error'], 'invalid_request');
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    } finally {
      await limited.stop();
    }
  });
});
