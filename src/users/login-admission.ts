import { randomBytes } from 'node:crypto';
import {
  admit,
  lockOf,
  settle,
  type Admission,
  type AttemptLedger,
  type Refusal,
  type Settlement,
} from './attempt-ledger.ts';
import type { LockoutPolicy } from './lockout.ts';

/** What a change of one ledger gives back: the ledger to write (none: nothing to write) and its result. */
export interface LedgerChange<R> {
  ledger?: AttemptLedger;
  result: R;
  /**
   * A successful login settled by this change, at this time (Unix ms). A store that keeps the user's
   * status in the object it writes the ledger to records it as the last login in the same write.
   */
  loggedInAtMs?: number;
  /**
   * The result rests on other replicas' running checks as this copy of the ledger shows them: a store that
   * took the copy from a cache reads the ledger afresh and applies the change again before answering. (A
   * change that writes needs no such flag: its compare-and-swap fails on a stale copy.)
   */
  confirm?: true;
}

/**
 * Where the ledgers of one kind of login name live (a User's annotation, or the shared shards for names
 * that are no user). `update` reads, changes and writes with compare-and-swap on resourceVersion,
 * retrying conflicts a bounded number of times; `change` returning no ledger means "nothing to write".
 */
export interface LedgerStore {
  /** The ledger as this replica last saw it: no I/O. */
  peek(key: string): AttemptLedger;
  update<R>(key: string, change: (ledger: AttemptLedger) => LedgerChange<R>): Promise<R>;
  /** Names sharing one stored object share one queue (one writer per object per replica). */
  queueOf(key: string): string;
}

/** Compare-and-swap kept conflicting past its retries (many replicas writing one ledger at once). */
export class LedgerContendedError extends Error {}

export type Reservation =
  { admitted: true; settle: (outcome: Settlement) => Promise<{ lockedNow: boolean }> } | Refusal;

/**
 * How long a success's settlement may wait to ride along with the next write of its ledger (the next
 * login's reservation, as a rule) before it is written alone. Meanwhile the reservation still counts as
 * a running check; a replica that dies in that time leaves it to its lease, which counts it as a failure.
 */
export const SUCCESS_SETTLE_DELAY_MS = 250;

/**
 * How old a reservation may be and still be taken over by the next check of the same name on this replica,
 * while its success's settlement waits (see `reserve`). Well inside RESERVATION_LEASE_MS: the check that
 * takes it over must settle before the lease, counted from the reservation's own time, ends.
 */
export const REUSE_MAX_AGE_MS = 10_000;

/** A reservation in the ledger: its id there, and its time there (Unix ms), from which its lease runs. */
interface Slot {
  id: string;
  reservedAtMs: number;
}

/** One change waiting for its ledger's next write. */
interface Pending {
  store: LedgerStore;
  key: string;
  change: (ledger: AttemptLedger) => LedgerChange<unknown>;
  /**
   * Set on a success's settlement (and only there): the reservation it frees. Such a change may wait for the
   * ledger's next write (SUCCESS_SETTLE_DELAY_MS), and the next check may take the reservation over instead.
   */
  slot?: Slot;
  /** When it was queued (`performance.now()`), from which a success's settlement waits its delay. */
  sinceMs: number;
  resolve: (result: unknown) => void;
  reject: (err: unknown) => void;
  /** Settles with the change, whatever its outcome. */
  done: Promise<void>;
}

/** The changes waiting for one stored object, and whether a write of it is running. */
interface Queue {
  waiting: Pending[];
  writing: boolean;
  /** Set while only successes' settlements wait: writes them when no other write took them along. */
  timer: NodeJS.Timeout | undefined;
}

/**
 * Admission control for password checks: at most `maxFailures` checks per login name per window, across
 * all replicas and whatever the concurrency. A check is reserved in the shared ledger BEFORE the
 * password is compared and settled after it, so concurrent guesses see each other's reservations.
 * Within a replica the writes of one stored object run one at a time (no self-inflicted conflicts), and
 * the changes that queue up behind a running write go into the next write together, applied in order as
 * if written one by one; between replicas compare-and-swap orders them.
 */
export class LoginAdmission {
  readonly #policy: LockoutPolicy;
  readonly #nowMs: () => number;
  readonly #successDelayMs: number;
  readonly #queues = new Map<string, Queue>();
  /**
   * The reservations this replica holds in ledgers and has not settled. A refusal because checks are
   * running is certain when they are all this replica's; another replica's may have settled meanwhile.
   */
  readonly #running = new Set<string>();
  #flushing = false;

  constructor(deps: { policy: LockoutPolicy; nowMs?: () => number; successSettleDelayMs?: number }) {
    this.#policy = deps.policy;
    this.#nowMs = deps.nowMs ?? Date.now;
    this.#successDelayMs = deps.successSettleDelayMs ?? SUCCESS_SETTLE_DELAY_MS;
  }

  async reserve(store: LedgerStore, key: string): Promise<Reservation> {
    // A known lock is answered without I/O, for known and unknown names alike.
    const lock = lockOf(store.peek(key), this.#nowMs());
    if (lock.locked) return { admitted: false, retryAfterSeconds: lock.retryAfterSeconds };
    const reused = this.#takeFreedSlot(store, key);
    if (reused) return this.#admitted(store, key, reused);
    const id = randomBytes(9).toString('base64url');
    let reservedAtMs = 0;
    const verdict = await this.#enqueue<Admission>(store, key, (ledger) => {
      reservedAtMs = this.#nowMs();
      const admission = admit(ledger, id, reservedAtMs, this.#policy);
      if (admission.admitted) {
        this.#running.add(id);
        return { ledger: admission.ledger, result: admission };
      }
      const othersRunning =
        admission.checksRunning === true &&
        Object.keys(ledger.pending).some((held) => !this.#running.has(held));
      return othersRunning ? { result: admission, confirm: true } : { result: admission };
    }).catch((err: unknown) => {
      this.#running.delete(id);
      throw err;
    });
    if (!verdict.admitted) return verdict;
    return this.#admitted(store, key, { id, reservedAtMs });
  }

  #admitted(store: LedgerStore, key: string, slot: Slot): Reservation {
    return {
      admitted: true,
      // A failure is written at once (it is answered only after); a success, which only frees room, may
      // wait a moment for the next write of its ledger.
      settle: (outcome) =>
        this.#enqueue(
          store,
          key,
          (ledger) => {
            this.#running.delete(slot.id);
            const nowMs = this.#nowMs();
            const next = settle(ledger, slot.id, outcome, nowMs, this.#policy);
            return {
              ledger: next.ledger,
              result: { lockedNow: next.lockedNow },
              ...(outcome === 'success' ? { loggedInAtMs: nowMs } : {}),
            };
          },
          outcome === 'success' ? slot : undefined,
        ),
    };
  }

  /**
   * A reservation whose check succeeded and whose settlement still waits to be written, taken over for the
   * next check of the same name: the ledger keeps counting it as a running check, and a storm of one
   * account's logins (a script, a dashboard's many tabs) writes its ledger every REUSE_MAX_AGE_MS per
   * reservation, not once per login. Only while the ledger as this replica sees it holds no failure (a
   * success's settlement forgets them, so it must be written then) and still holds the reservation.
   */
  #takeFreedSlot(store: LedgerStore, key: string): Slot | undefined {
    const queue = this.#queues.get(store.queueOf(key));
    if (!queue) return undefined;
    const ledger = store.peek(key);
    if (ledger.failures.length > 0) return undefined;
    const nowMs = this.#nowMs();
    const index = queue.waiting.findIndex(
      (p) =>
        p.slot !== undefined &&
        p.store === store &&
        p.key === key &&
        nowMs - p.slot.reservedAtMs < REUSE_MAX_AGE_MS &&
        p.slot.id in ledger.pending,
    );
    if (index < 0) return undefined;
    const [freed] = queue.waiting.splice(index, 1);
    // Its check succeeded and the reservation goes on: nothing to write for it.
    freed!.resolve({ lockedNow: false });
    clearTimeout(queue.timer);
    queue.timer = undefined;
    this.#writeSoon(store.queueOf(key), queue);
    return freed!.slot;
  }

  /** Writes every change still waiting (at shutdown), so no success is left to count as a failure. */
  async flush(): Promise<void> {
    this.#flushing = true;
    try {
      const waiting = [...this.#queues.values()].flatMap((q) => q.waiting.map((p) => p.done));
      for (const [name, queue] of this.#queues) this.#writeNext(name, queue);
      await Promise.all(waiting);
    } finally {
      this.#flushing = false;
    }
  }

  #enqueue<R>(
    store: LedgerStore,
    key: string,
    change: (ledger: AttemptLedger) => LedgerChange<R>,
    /** A success's settlement: the reservation it frees. */
    slot?: Slot,
  ): Promise<R> {
    const name = store.queueOf(key);
    let queue = this.#queues.get(name);
    if (!queue) {
      queue = { waiting: [], writing: false, timer: undefined };
      this.#queues.set(name, queue);
    }
    let resolve!: (result: unknown) => void;
    let reject!: (err: unknown) => void;
    const result = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    queue.waiting.push({
      store,
      key,
      change,
      sinceMs: performance.now(),
      ...(slot ? { slot } : {}),
      resolve,
      reject,
      done,
    });
    this.#writeSoon(name, queue);
    return result as Promise<R>;
  }

  /** Writes now if anything but a success's settlement waits; otherwise once the delay has passed. */
  #writeSoon(name: string, queue: Queue): void {
    if (queue.writing) return;
    if (queue.waiting.length === 0) {
      this.#queues.delete(name);
      return;
    }
    if (this.#flushing || queue.waiting.some((p) => p.slot === undefined)) {
      this.#writeNext(name, queue);
      return;
    }
    if (queue.timer) return;
    // From the oldest waiting: taking a freed reservation over re-arms the timer, and must not postpone
    // the others' settlements (their reservations age towards their lease).
    const oldest = Math.min(...queue.waiting.map((p) => p.sinceMs));
    const delay = Math.max(0, oldest + this.#successDelayMs - performance.now());
    queue.timer = setTimeout(() => this.#writeNext(name, queue), delay);
    queue.timer.unref();
  }

  /**
   * Writes the waiting changes of one ledger (those at the head of the queue with the same store and key)
   * in one compare-and-swap write, unless a write of the object is running: then they wait for it.
   */
  #writeNext(name: string, queue: Queue): void {
    if (queue.writing) return;
    clearTimeout(queue.timer);
    queue.timer = undefined;
    const first = queue.waiting[0];
    if (!first) {
      this.#queues.delete(name);
      return;
    }
    let count = 1;
    while (count < queue.waiting.length) {
      const next = queue.waiting[count]!;
      if (next.store !== first.store || next.key !== first.key) break;
      count++;
    }
    const batch = queue.waiting.splice(0, count);
    queue.writing = true;
    first.store
      .update(first.key, (ledger) => {
        // Applied in order, as if each were written alone; a conflict re-applies them all to the fresh ledger.
        let current = ledger;
        let changed = false;
        let loggedInAtMs: number | undefined;
        let confirm = false;
        const results: unknown[] = [];
        for (const pending of batch) {
          const step = pending.change(current);
          if (step.ledger) {
            current = step.ledger;
            changed = true;
          }
          if (step.loggedInAtMs !== undefined) loggedInAtMs = step.loggedInAtMs;
          if (step.confirm) confirm = true;
          results.push(step.result);
        }
        return {
          ...(changed ? { ledger: current } : {}),
          result: results,
          ...(loggedInAtMs !== undefined ? { loggedInAtMs } : {}),
          ...(confirm ? { confirm: true as const } : {}),
        };
      })
      .then(
        (results) => batch.forEach((pending, i) => pending.resolve(results[i])),
        (err: unknown) => batch.forEach((pending) => pending.reject(err)),
      )
      .finally(() => {
        queue.writing = false;
        this.#writeSoon(name, queue);
      });
  }
}
