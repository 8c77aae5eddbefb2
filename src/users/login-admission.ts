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

/**
 * Where the ledgers of one kind of login name live (a User's annotation, or the shared shards for names
 * that are no user). `update` reads, changes and writes with compare-and-swap on resourceVersion,
 * retrying conflicts a bounded number of times; `change` returning no ledger means "nothing to write".
 */
export interface LedgerStore {
  /** The ledger as this replica last saw it: no I/O. */
  peek(key: string): AttemptLedger;
  update<R>(
    key: string,
    change: (ledger: AttemptLedger) => { ledger?: AttemptLedger; result: R },
  ): Promise<R>;
  /** Names sharing one stored object share one queue (one writer per object per replica). */
  queueOf(key: string): string;
}

/** Compare-and-swap kept conflicting past its retries (many replicas writing one ledger at once). */
export class LedgerContendedError extends Error {}

export type Reservation =
  { admitted: true; settle: (outcome: Settlement) => Promise<{ lockedNow: boolean }> } | Refusal;

/**
 * Admission control for password checks: at most `maxFailures` checks per login name per window, across
 * all replicas and whatever the concurrency. A check is reserved in the shared ledger BEFORE the
 * password is compared and settled after it, so concurrent guesses see each other's reservations.
 * Within a replica the operations on one stored object run one at a time (no self-inflicted conflicts);
 * between replicas compare-and-swap orders them.
 */
export class LoginAdmission {
  readonly #policy: LockoutPolicy;
  readonly #nowMs: () => number;
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(deps: { policy: LockoutPolicy; nowMs?: () => number }) {
    this.#policy = deps.policy;
    this.#nowMs = deps.nowMs ?? Date.now;
  }

  async reserve(store: LedgerStore, key: string): Promise<Reservation> {
    // A known lock is answered without I/O, for known and unknown names alike.
    const lock = lockOf(store.peek(key), this.#nowMs());
    if (lock.locked) return { admitted: false, retryAfterSeconds: lock.retryAfterSeconds };
    const id = randomBytes(9).toString('base64url');
    const verdict = await this.#serially(store.queueOf(key), () =>
      store.update<Admission>(key, (ledger) => {
        const admission = admit(ledger, id, this.#nowMs(), this.#policy);
        return admission.admitted ? { ledger: admission.ledger, result: admission } : { result: admission };
      }),
    );
    if (!verdict.admitted) return verdict;
    return {
      admitted: true,
      settle: (outcome) =>
        this.#serially(store.queueOf(key), () =>
          store.update(key, (ledger) => {
            const next = settle(ledger, id, outcome, this.#nowMs(), this.#policy);
            return { ledger: next.ledger, result: { lockedNow: next.lockedNow } };
          }),
        ),
    };
  }

  /** Runs `task` after every earlier task of the same queue has finished (successfully or not). */
  #serially<R>(queue: string, task: () => Promise<R>): Promise<R> {
    const previous = this.#queues.get(queue) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    this.#queues.set(queue, tail);
    void tail.then(() => {
      if (this.#queues.get(queue) === tail) this.#queues.delete(queue);
    });
    return run;
  }
}

/** Bounded compare-and-swap retries with a little jitter, so replicas colliding on one object spread out. */
export const CAS_RETRIES = 10;
export function casBackoffMs(attempt: number): number {
  return Math.min(50, 2 ** attempt) + Math.random() * 5;
}
