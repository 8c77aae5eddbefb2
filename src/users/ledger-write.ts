import { ConflictError } from './iam-api.ts';
import { LedgerContendedError } from './login-admission.ts';

/** Bounded compare-and-swap retries with a little jitter, so replicas colliding on one object spread out. */
export const CAS_RETRIES = 10;
export function casBackoffMs(attempt: number): number {
  return Math.min(50, 2 ** attempt) + Math.random() * 5;
}

/** One change applied to one copy of the stored object: its write (none: nothing to write) and result. */
export interface LedgerWriteStep<R> {
  write?: () => Promise<void>;
  result: R;
  /** The result needs a fresh copy to stand (LedgerChange.confirm). */
  confirm?: true;
}

/**
 * One change of a stored ledger by compare-and-swap: applied to the copy `read` gives, written, and on a
 * conflict applied again to a fresh read, at most CAS_RETRIES times (then LedgerContendedError). A change
 * that writes nothing answers at once, unless it asks for confirmation and its copy was not known fresh:
 * then it is applied once more to a fresh read (a refusal writes nothing, so no compare-and-swap would
 * catch a stale copy).
 */
export async function writeLedgerChange<T, R>(steps: {
  /** The object as this replica last saw it, and whether that copy is known fresh. */
  read: () => Promise<{ object: T; fresh: boolean }>;
  readFresh: () => Promise<T>;
  apply: (object: T) => LedgerWriteStep<R>;
}): Promise<R> {
  let { object: current, fresh } = await steps.read();
  for (let attempt = 1; ; attempt++) {
    const { write, result, confirm } = steps.apply(current);
    if (!write) {
      if (!confirm || fresh) return result;
    } else {
      try {
        await write();
        return result;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        if (attempt >= CAS_RETRIES) throw new LedgerContendedError(String(err));
        await new Promise((resolve) => setTimeout(resolve, casBackoffMs(attempt)));
      }
    }
    current = await steps.readFresh();
    fresh = true;
  }
}
