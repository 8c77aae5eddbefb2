import { createHash } from 'node:crypto';
import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import { decodeLedger, encodeLedger, isEmpty, normalized, type AttemptLedger } from './attempt-ledger.ts';
import { codeOf, ConflictError, type IamApi } from './iam-api.ts';
import { writeLedgerChange } from './ledger-write.ts';
import type { LedgerChange, LedgerStore } from './login-admission.ts';
import type { LockoutPolicy } from './lockout.ts';

/** A shard of the shared ledgers of login names that are no user (`loginthrottles.iam.<platform>.io`). */
export interface LoginThrottleObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string };
  spec: { entries?: Record<string, string> };
}

export const SHARDS = 16;
/** Per shard; 16 × 512 names at most are tracked at once (the bound on cluster and memory use). */
export const ENTRIES_PER_SHARD = 512;

/**
 * The admission ledgers of login names that match no user, so that after N failures an unknown name is
 * refused exactly as a known one (otherwise the lock would tell which names exist). Names are kept as a
 * truncated SHA-256 (people type passwords into the name field; those never reach the cluster in clear)
 * in 16 shard objects of bounded size. Each replica keeps its last copy of every shard (the in-process
 * form, answering locks without I/O) and writes with compare-and-swap like the users' ledgers. Without
 * the loginthrottles CRD the shards stay in-process only (counted per replica; said at start).
 */
export class UnknownNameLedgers implements LedgerStore {
  readonly #api: IamApi;
  readonly #policy: LockoutPolicy;
  readonly #nowMs: () => number;
  readonly #shared: () => boolean;
  readonly #shards = new Map<string, LoginThrottleObject>();

  constructor(deps: { api: IamApi; policy: LockoutPolicy; shared: () => boolean; nowMs?: () => number }) {
    this.#api = deps.api;
    this.#policy = deps.policy;
    this.#shared = deps.shared;
    this.#nowMs = deps.nowMs ?? Date.now;
  }

  peek(login: string): AttemptLedger {
    const { shard, entry } = locate(login);
    return decodeLedger(this.#shards.get(shard)?.spec.entries?.[entry]);
  }

  queueOf(login: string): string {
    return `unknown/${locate(login).shard}`;
  }

  update<R>(login: string, change: (ledger: AttemptLedger) => LedgerChange<R>): Promise<R> {
    const { shard, entry } = locate(login);
    return writeLedgerChange({
      read: async () => {
        const known = this.#shards.get(shard);
        return { object: known ?? (await this.#read(shard)), fresh: known === undefined || !this.#shared() };
      },
      readFresh: () => this.#read(shard),
      apply: (current) => {
        const entries = { ...current.spec.entries };
        const { ledger, result, confirm } = change(decodeLedger(entries[entry]));
        if (!ledger) return { result, ...(confirm ? { confirm } : {}) };
        entries[entry] = encodeLedger(ledger);
        const next: LoginThrottleObject = { ...current, spec: { entries: this.#bounded(entries, entry) } };
        const write = async () => {
          this.#shards.set(shard, this.#shared() ? await this.#write(next) : next);
        };
        return { write, result };
      },
    });
  }

  /** Forgets ledgers with nothing left to count, then the least recently touched beyond the bound. */
  #bounded(entries: Record<string, string>, keep: string): Record<string, string> {
    const now = this.#nowMs();
    const live = Object.entries(entries)
      .map(([key, text]) => [key, normalized(decodeLedger(text), now, this.#policy)] as const)
      .filter(([key, ledger]) => key === keep || !isEmpty(ledger));
    live.sort(([, a], [, b]) => lastTouch(b) - lastTouch(a));
    const kept = live.filter(([key]) => key !== keep).slice(0, ENTRIES_PER_SHARD - 1);
    const out: Record<string, string> = {};
    for (const [key, ledger] of kept) out[key] = encodeLedger(ledger);
    out[keep] = entries[keep]!;
    return out;
  }

  async #read(shard: string): Promise<LoginThrottleObject> {
    const empty: LoginThrottleObject = {
      apiVersion: `${this.#api.iam.group}/${this.#api.iam.version}`,
      kind: 'LoginThrottle',
      metadata: { name: shard },
      spec: { entries: {} },
    };
    if (!this.#shared()) return empty;
    const found = await this.#api.get<LoginThrottleObject>('loginthrottles', shard);
    if (found) {
      this.#shards.set(shard, found);
      return found;
    }
    return empty;
  }

  /** Replace with compare-and-swap; a shard not created yet is created (two creators: one conflicts). */
  async #write(next: LoginThrottleObject): Promise<LoginThrottleObject> {
    if (next.metadata.resourceVersion) return this.#api.replace('loginthrottles', next);
    try {
      return await this.#api.create('loginthrottles', next);
    } catch (err) {
      if (codeOf(err) === 409)
        throw new ConflictError(`loginthrottles/${next.metadata.name} created concurrently`);
      throw err;
    }
  }
}

function locate(login: string): { shard: string; entry: string } {
  const digest = createHash('sha256').update(login.toLowerCase()).digest();
  return {
    shard: `unknown-names-${String(digest[0]! % SHARDS).padStart(2, '0')}`,
    entry: digest.subarray(0, 16).toString('hex'),
  };
}

function lastTouch(ledger: AttemptLedger): number {
  return Math.max(ledger.lockedUntil ?? 0, ...ledger.failures, ...Object.values(ledger.pending), 0);
}
