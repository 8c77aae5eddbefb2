import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EMPTY_LEDGER, type AttemptLedger } from '../../src/users/attempt-ledger.ts';
import {
  LoginAdmission,
  REUSE_MAX_AGE_MS,
  type LedgerChange,
  type LedgerStore,
} from '../../src/users/login-admission.ts';

/**
 * An in-memory ledger store that counts its writes. Each write resolves when the test lets it
 * (`release`), so the test decides what queues up behind a running write.
 */
class CountingStore implements LedgerStore {
  readonly ledgers = new Map<string, AttemptLedger>();
  readonly writes: { key: string; loggedInAtMs: number | undefined }[] = [];
  #gate: Promise<void> = Promise.resolve();
  #open: () => void = () => {};

  /** From now on each write waits until `release`. */
  hold(): void {
    this.#gate = new Promise((resolve) => (this.#open = resolve));
  }
  release(): void {
    this.#open();
    this.#gate = Promise.resolve();
  }
  peek(key: string): AttemptLedger {
    return this.ledgers.get(key) ?? EMPTY_LEDGER;
  }
  queueOf(key: string): string {
    return key;
  }
  async update<R>(key: string, change: (ledger: AttemptLedger) => LedgerChange<R>): Promise<R> {
    const { ledger, result, loggedInAtMs } = change(this.peek(key));
    if (!ledger && loggedInAtMs === undefined) return result;
    await this.#gate;
    if (ledger) this.ledgers.set(key, ledger);
    this.writes.push({ key, loggedInAtMs });
    return result;
  }
}

const policy = { maxFailures: 3, windowSeconds: 600 };

async function admitted(admission: LoginAdmission, store: LedgerStore, key: string) {
  const reservation = await admission.reserve(store, key);
  assert.ok(reservation.admitted, 'admitted');
  return reservation;
}

describe('login admission: writes of one ledger', () => {
  test('changes that queue behind a running write go into the next write together, in order', async () => {
    const store = new CountingStore();
    const admission = new LoginAdmission({ policy });
    store.hold();
    const first = admission.reserve(store, 'alice');
    // Three more reservations while the first write runs: limit 3, so the last is refused in the batch.
    const more = [1, 2, 3].map(() => admission.reserve(store, 'alice'));
    store.release();
    const answers = await Promise.all([first, ...more]);
    assert.deepEqual(
      answers.map((a) => a.admitted),
      [true, true, true, false],
    );
    assert.equal(store.writes.length, 2, 'one write for the first, one for the three behind it');
    assert.equal(Object.keys(store.peek('alice').pending).length, 3);
  });

  test('the next check takes a succeeded reservation over: no write, and the ledger still counts it', async () => {
    const store = new CountingStore();
    const admission = new LoginAdmission({ policy, successSettleDelayMs: 60_000 });
    const a = await admitted(admission, store, 'alice');
    const [id] = Object.keys(store.peek('alice').pending);
    const settled = a.settle('success');
    const b = await admitted(admission, store, 'alice');
    assert.deepEqual(await settled, { lockedNow: false });
    assert.equal(store.writes.length, 1, 'only the first reservation was written');
    assert.deepEqual(
      Object.keys(store.peek('alice').pending),
      [id],
      'the same reservation runs the next check',
    );
    // A wrong password on it counts as a failure like any other.
    assert.deepEqual(await b.settle('failure'), { lockedNow: false });
    assert.deepEqual(Object.keys(store.peek('alice').pending), []);
    assert.equal(store.peek('alice').failures.length, 1);
  });

  test("no takeover while the ledger holds failures: the success's settlement (which forgets them) rides along with the next reservation", async () => {
    const store = new CountingStore();
    const admission = new LoginAdmission({ policy, successSettleDelayMs: 60_000 });
    const wrong = await admitted(admission, store, 'alice');
    await wrong.settle('failure');
    const a = await admitted(admission, store, 'alice');
    const settled = a.settle('success');
    await admitted(admission, store, 'alice');
    await settled;
    assert.equal(store.writes.length, 4, 'failure, reservation, then the next reservation with the success');
    assert.ok(store.writes[3]!.loggedInAtMs !== undefined, 'the store is told a login succeeded');
    assert.equal(store.peek('alice').failures.length, 0, 'the success forgot the failure');
    assert.equal(Object.keys(store.peek('alice').pending).length, 1, 'only the new check is pending');
  });

  test('a reservation older than REUSE_MAX_AGE_MS is not taken over: its settlement rides along with a new one', async () => {
    const store = new CountingStore();
    let now = 1_000_000;
    const admission = new LoginAdmission({ policy, successSettleDelayMs: 60_000, nowMs: () => now });
    const a = await admitted(admission, store, 'alice');
    const [old] = Object.keys(store.peek('alice').pending);
    now += REUSE_MAX_AGE_MS;
    const settled = a.settle('success');
    await admitted(admission, store, 'alice');
    await settled;
    assert.equal(store.writes.length, 2);
    const pending = store.peek('alice').pending;
    assert.equal(Object.keys(pending).length, 1);
    assert.ok(!(old! in pending), 'the old reservation is settled');
    assert.equal(Object.values(pending)[0], now, 'the new one is reserved now');
  });

  test('a reservation the ledger no longer holds (cleared by an administrator) is not taken over', async () => {
    const store = new CountingStore();
    const admission = new LoginAdmission({ policy, successSettleDelayMs: 60_000 });
    const a = await admitted(admission, store, 'alice');
    store.ledgers.delete('alice');
    const settled = a.settle('success');
    await admitted(admission, store, 'alice');
    await settled;
    assert.equal(store.writes.length, 2, 'a new reservation is written');
    assert.equal(Object.keys(store.peek('alice').pending).length, 1);
  });

  test('a freed reservation not taken over is written after the delay, though another was taken over', async () => {
    const store = new CountingStore();
    const admission = new LoginAdmission({ policy, successSettleDelayMs: 30 });
    const a = await admitted(admission, store, 'alice');
    const b = await admitted(admission, store, 'alice');
    const [idA, idB] = Object.keys(store.peek('alice').pending);
    const settledA = a.settle('success');
    const settledB = b.settle('success');
    await admitted(admission, store, 'alice');
    await settledA;
    assert.equal(store.writes.length, 2, 'the first freed one was taken over');
    await settledB;
    assert.equal(store.writes.length, 3, 'the second was written alone');
    assert.deepEqual(Object.keys(store.peek('alice').pending), [idA], `not ${idB}`);
  });

  test('a success alone is written after the delay; a failure at once', async () => {
    const store = new CountingStore();
    const admission = new LoginAdmission({ policy, successSettleDelayMs: 20 });
    const a = await admitted(admission, store, 'alice');
    const b = await admitted(admission, store, 'alice');
    await b.settle('failure');
    assert.equal(store.writes.length, 3, 'the failure is written before it is answered');
    assert.equal(store.peek('alice').failures.length, 1);
    const settled = a.settle('success');
    assert.equal(store.writes.length, 3);
    await settled;
    assert.equal(store.writes.length, 4);
    assert.deepEqual(store.peek('alice'), { failures: [], pending: {} });
  });

  test('flush writes the successes still waiting', async () => {
    const store = new CountingStore();
    const admission = new LoginAdmission({ policy, successSettleDelayMs: 60_000 });
    const reservations = [await admitted(admission, store, 'alice'), await admitted(admission, store, 'bob')];
    const settled = reservations.map((r) => r.settle('success'));
    await admission.flush();
    await Promise.all(settled);
    assert.deepEqual(
      store.writes.slice(2).map((w) => w.key),
      ['alice', 'bob'],
    );
    assert.equal(Object.keys(store.peek('alice').pending).length, 0);
    assert.equal(Object.keys(store.peek('bob').pending).length, 0);
  });

  test('a failed write rejects every change of its batch, and the next write goes on', async () => {
    const store = new CountingStore();
    const admission = new LoginAdmission({ policy });
    let failNext = true;
    const failing: LedgerStore = {
      peek: (key) => store.peek(key),
      queueOf: (key) => key,
      update: (key, change) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(new Error('apiserver away'));
        }
        return store.update(key, change);
      },
    };
    await assert.rejects(admission.reserve(failing, 'alice'), /apiserver away/);
    assert.ok((await admission.reserve(failing, 'alice')).admitted);
    assert.equal(store.writes.length, 1);
  });
});

/**
 * A replica's view of one ledger that lags the stored one: changes are applied to the cached copy, and a
 * change that asks for confirmation is applied again to the stored ledger (counted in `freshReads`).
 */
class LaggingStore implements LedgerStore {
  freshReads = 0;
  cached: AttemptLedger;
  stored: AttemptLedger;
  constructor(cached: AttemptLedger, stored: AttemptLedger) {
    this.cached = cached;
    this.stored = stored;
  }
  peek(): AttemptLedger {
    return this.cached;
  }
  queueOf(key: string): string {
    return key;
  }
  async update<R>(_key: string, change: (ledger: AttemptLedger) => LedgerChange<R>): Promise<R> {
    const first = change(this.cached);
    if (first.ledger || !first.confirm) {
      if (first.ledger) this.cached = this.stored = first.ledger;
      return first.result;
    }
    this.freshReads++;
    this.cached = this.stored;
    const again = change(this.stored);
    if (again.ledger) this.cached = this.stored = again.ledger;
    return again.result;
  }
}

describe('login admission: refusals from a copy that may lag', () => {
  const nowMs = Date.now();

  test("a refusal because another replica's checks run is confirmed on a fresh copy: the lock that replica set meanwhile answers", async () => {
    const lockedUntil = nowMs + 600_000;
    const store = new LaggingStore(
      // As this replica last saw it: two failures and the other replica's third check running.
      { failures: [nowMs - 2000, nowMs - 1000], pending: { 'other-replica': nowMs - 500 } },
      // Stored: that check failed and locked the name.
      { failures: [nowMs - 2000, nowMs - 1000, nowMs - 100], pending: {}, lockedUntil },
    );
    const admission = new LoginAdmission({ policy, nowMs: () => nowMs });
    const answer = await admission.reserve(store, 'alice');
    assert.equal(store.freshReads, 1);
    assert.deepEqual(answer, { admitted: false, retryAfterSeconds: 600 });
  });

  test("a refusal because this replica's own checks run is answered from the copy, without a read", async () => {
    const store = new LaggingStore(EMPTY_LEDGER, EMPTY_LEDGER);
    const admission = new LoginAdmission({ policy });
    for (let i = 0; i < policy.maxFailures; i++) await admitted(admission, store, 'alice');
    const answer = await admission.reserve(store, 'alice');
    assert.equal(answer.admitted, false);
    assert.equal(!answer.admitted && answer.checksRunning, true);
    assert.equal(store.freshReads, 0);
  });

  test('once one of its checks settles, a replica confirms a refusal that rests on the rest only if they are not its own', async () => {
    const store = new LaggingStore(EMPTY_LEDGER, EMPTY_LEDGER);
    const admission = new LoginAdmission({ policy });
    const own = [];
    for (let i = 0; i < policy.maxFailures - 1; i++) own.push(await admitted(admission, store, 'alice'));
    // Another replica's check fills the last place; this replica sees it.
    store.cached = store.stored = {
      ...store.stored,
      pending: { ...store.stored.pending, other: Date.now() },
    };
    assert.equal((await admission.reserve(store, 'alice')).admitted, false);
    assert.equal(store.freshReads, 1, "the other replica's check is confirmed");
    await own[0]!.settle('failure');
    store.stored = {
      ...store.stored,
      pending: Object.fromEntries(Object.entries(store.stored.pending).filter(([id]) => id !== 'other')),
    };
    assert.equal((await admission.reserve(store, 'alice')).admitted, true, 'the fresh copy has room');
  });
});
