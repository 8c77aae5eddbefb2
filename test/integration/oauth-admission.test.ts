// Lockout as admission control (issue 15 item 2): at most maxFailures password checks per name per window
// across two replicas, whatever the concurrency; no failure dropped; unknown names answered as known ones.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
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

const MAX = 10;
const PASSWORD = 'adm-Pa55word!';
const suffix = randomBytes(3).toString('hex');
const USERS = ['burst20', 'burst50', 'sequential', 'known', 'together'].map((n) => `adm-${n}-${suffix}`);
const [BURST20, BURST50, SEQUENTIAL, KNOWN, TOGETHER] = USERS as [string, string, string, string, string];
const UNKNOWN = `adm-nobody-${suffix}`;

type Answer = Awaited<ReturnType<typeof passwordLogin>>;

describe('login admission across replicas', () => {
  let kc: KubeConfig;
  let a: ServerProcess;
  let b: ServerProcess;
  let keys: ReturnType<typeof generateTestKeys>;

  before(async () => {
    const cp = await testControlPlane();
    kc = adminKubeConfig(cp.kubeconfigPath);
    await installIamCrds(kc);
    await deleteUsersAndSessions(kc, USERS);
    for (const name of USERS) await createUser(kc, { name, password: PASSWORD, groups: [] });
    keys = generateTestKeys();
    const args = [
      `--kubernetes.kubeconfig=${cp.kubeconfigPath}`,
      `--auth.signingKeyFile=${keys.es256}`,
      '--auth.addressRequestsPerMinute=0',
      `--auth.lockout.maxFailures=${MAX}`,
      '--auth.lockout.windowSeconds=600',
    ];
    // One after the other: two cold starts at once on a busy machine can miss the start deadline.
    a = await startReadyServer(args);
    b = await startReadyServer(args);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await deleteUsersAndSessions(kc, USERS);
    keys?.cleanup();
  });

  /** Password checks made by both replicas so far (the bcrypt histogram's count). */
  const checks = async (): Promise<number> => {
    let total = 0;
    for (const server of [a, b]) {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const m = /^platform_password_verify_duration_seconds_count (\d+)/m.exec(text);
      total += Number(m?.[1] ?? 0);
    }
    return total;
  };

  const ledgerOf = async (name: string) => {
    const user = (await kc
      .makeApiClient(CustomObjectsApi)
      .getClusterCustomObject({ ...IAM, plural: 'users', name })) as {
      metadata: { annotations?: Record<string, string> };
      status?: Record<string, unknown>;
    };
    const text = user.metadata.annotations?.[`${IAM.group}/login-attempts`];
    const ledger = text
      ? (JSON.parse(text) as { f: number[]; p: Record<string, number>; l?: number })
      : undefined;
    return { ledger, status: user.status ?? {} };
  };

  /** Fires `passwords.length` logins at once, alternating between the replicas. */
  const burst = (name: string, passwords: string[]): Promise<Answer[]> =>
    Promise.all(passwords.map((p, i) => passwordLogin((i % 2 ? b : a).url, name, p)));

  /** Refused because the ledger's compare-and-swap kept conflicting: these may keep guesses from being checked. */
  const contended = (answers: Answer[]) =>
    answers.filter((r) => r.status === 503 && /concurrent logins/.test(String(r.body['error_description'])))
      .length;
  const tally = (answers: Answer[]) => {
    const count = (status: number) => answers.filter((r) => r.status === status).length;
    return { ok: count(200), failed: count(400), locked: count(429), busy: count(503) };
  };

  /** Every failed check answered 400 is in the ledger once all settlements have landed. */
  const settledFailures = (name: string, expected: number) =>
    waitFor(`${name}: ${expected} failures settled`, async () => {
      const { ledger, status } = await ledgerOf(name);
      return ledger && Object.keys(ledger.p).length === 0 && ledger.f.length === expected
        ? { ledger, status }
        : undefined;
    });

  test('20 concurrent guesses on two replicas: at most 10 checks, a right password after the limit gets no token', async () => {
    const before = await checks();
    const passwords = Array.from({ length: 20 }, (_, i) => (i === 13 ? PASSWORD : `wrong-${i}`));
    const answers = await burst(BURST20, passwords);
    const t = tally(answers);
    const statuses = JSON.stringify(answers.map((r) => r.status));
    assert.equal(t.ok + t.failed + t.locked + t.busy, 20, statuses);
    if (answers[13]!.status === 200) {
      // Admitted while fewer than ten checks were counted (the burst's order is the network's): a right
      // password checked inside the limit is a normal login, and its success forgets the failures before it.
      assert.equal(t.ok, 1, statuses);
    } else {
      // Refused: locked (429), or while the admitted checks were still running (503, retry within a second).
      assert.ok([429, 503].includes(answers[13]!.status), statuses);
      assert.equal(t.ok, 0);
      assert.ok(t.failed <= MAX, `${t.failed} passwords checked: ${statuses}`);
      assert.equal(
        (await checks()) - before,
        t.failed,
        'bcrypt ran once per answered failure, at most maxFailures',
      );
      const { ledger } = await settledFailures(BURST20, t.failed);
      if (contended(answers) === 0) {
        assert.equal(t.failed, MAX, 'every admitted wrong guess counted');
        assert.ok(ledger.l, 'locked');
      }
    }
    // The limit holds afterwards on both replicas, also for the right password, checked no more.
    const afterBurst = await checks();
    if (t.ok === 0) {
      for (const server of [a, b]) {
        const res = await passwordLogin(server.url, BURST20, PASSWORD);
        assert.equal(res.status, 429, JSON.stringify(res.body));
      }
      assert.equal(await checks(), afterBurst);
    }
  });

  test('50 concurrent wrong guesses: exactly 10 checked, no failure dropped, the User shows AuthLimitExceeded', async () => {
    const before = await checks();
    const answers = await burst(
      BURST50,
      Array.from({ length: 50 }, (_, i) => `wrong-${i}`),
    );
    const t = tally(answers);
    assert.equal(t.ok, 0);
    assert.equal(t.failed + t.locked + t.busy, 50);
    assert.ok(t.failed <= MAX, `${t.failed} checked`);
    // Every 400 answered is a failure in the shared ledger.
    const { ledger } = await settledFailures(BURST50, t.failed);
    assert.equal(ledger.f.length, t.failed);
    assert.ok((await checks()) - before === t.failed, 'bcrypt ran once per failure answered');
    if (t.failed === MAX) {
      const status = await waitFor('lock shown on the User', async () => {
        const s = (await ledgerOf(BURST50)).status;
        return s['state'] === 'AuthLimitExceeded' ? s : undefined;
      });
      assert.match(String(status['reason']), /Failed login attempts exceed 10/);
      assert.equal(typeof status['lastTransitionTime'], 'string');
    }
    // Only contention may have turned guesses away without a lock; none was lost.
    assert.equal(t.busy + t.locked + t.failed, 50);
  });

  test('sequentially, the 11th guess right after the 10th failure is refused before its password is checked', async () => {
    for (let i = 0; i < MAX; i++) {
      const res = await passwordLogin((i % 2 ? b : a).url, SEQUENTIAL, `wrong-${i}`);
      assert.equal(res.status, 400, `guess ${i + 1}: ${JSON.stringify(res.body)}`);
    }
    const before = await checks();
    // Sent at once after the 10th answer, to both replicas, with the right password.
    for (const server of [a, b]) {
      const res = await passwordLogin(server.url, SEQUENTIAL, PASSWORD);
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.equal(res.body['error'], 'invalid_grant');
    }
    assert.equal(await checks(), before, 'no password was checked');
  });

  test('one account logging in 30 times at once with the right password: retry within a second, no lock', async () => {
    const answers = await burst(TOGETHER, Array<string>(30).fill(PASSWORD));
    const statuses = JSON.stringify(answers.map((r) => r.status));
    assert.ok(
      answers.every((r) => r.status === 200 || r.status === 503),
      `nothing failed, nothing locked: ${statuses}`,
    );
    // More than maxFailures at once: the checks beyond the running ones are refused until those settle.
    const waiting = answers.filter((r) => /being checked/.test(String(r.body['error_description'])));
    assert.ok(waiting.length > 0, statuses);
    for (const r of waiting) {
      assert.equal(r.body['error'], 'temporarily_unavailable');
      assert.equal(r.headers.get('retry-after'), '1');
    }
    // Retried as told, each refused login gets its token.
    for (const [i, r] of answers.entries()) {
      if (r.status === 200) continue;
      await waitFor(
        `login ${i} retried`,
        async () =>
          (await passwordLogin((i % 2 ? b : a).url, TOGETHER, PASSWORD)).status === 200 ? true : undefined,
        { intervalMs: 1000, timeoutMs: 30_000 },
      );
    }
    const { ledger, status } = await waitFor('every check settled', async () => {
      const l = await ledgerOf(TOGETHER);
      return l.ledger && Object.keys(l.ledger.p).length === 0 ? l : undefined;
    });
    assert.deepEqual(ledger!.f, []);
    assert.equal(ledger!.l, undefined);
    assert.notEqual(status['state'], 'AuthLimitExceeded');
  });

  test('after N failures an unknown name answers exactly as a known one (status, body, headers)', async () => {
    const run = async (name: string) => {
      const answers: Answer[] = [];
      for (let i = 0; i < MAX + 2; i++)
        answers.push(await passwordLogin((i % 2 ? b : a).url, name, `wrong-${i}`));
      return answers;
    };
    const [known, unknown] = [await run(KNOWN), await run(UNKNOWN)];
    const shape = (r: Answer) => ({
      status: r.status,
      body: { ...r.body, error_description: String(r.body['error_description']).replace(/\d+ s$/, 'N s') },
      headers: [...r.headers.keys()].filter((h) => h !== 'date' && h !== 'x-request-id').sort(),
      retryAfter: r.headers.get('retry-after') === null ? null : 'set',
      cacheControl: r.headers.get('cache-control'),
    });
    assert.deepEqual(unknown.map(shape), known.map(shape));
    assert.deepEqual(
      known.map((r) => r.status),
      [...Array<number>(MAX).fill(400), 429, 429],
    );
    // Retry-After of both is about one window.
    for (const r of [known.at(-1)!, unknown.at(-1)!]) {
      const retry = Number(r.headers.get('retry-after'));
      assert.ok(retry > 590 && retry <= 600, `Retry-After ${retry}`);
    }
    // Unknown names are stored only as digests in the shared shards: never in clear.
    const shards = (await kc
      .makeApiClient(CustomObjectsApi)
      .listClusterCustomObject({ ...IAM, plural: 'loginthrottles' })) as { items: unknown[] };
    assert.ok(shards.items.length >= 1);
    assert.ok(!JSON.stringify(shards).includes(UNKNOWN));
  });
});
