import { isDeepStrictEqual } from 'node:util';
import type { Informer } from '../cluster/informer.ts';
import type { Logger } from '../observability/logger.ts';
import { ConflictError, type IamApi } from './iam-api.ts';
import { decodeLedger, encodeLedger, type AttemptLedger } from './attempt-ledger.ts';
import type { UserObject, UserStatus } from './iam-resources.ts';
import { writeLedgerChange } from './ledger-write.ts';
import { LedgerContendedError, type LedgerChange, type LedgerStore } from './login-admission.ts';
import { statusAfterLock, statusAfterSuccess, stripExpiredLock, type LockoutPolicy } from './lockout.ts';
import { ReadThroughCache } from '../cluster/read-through.ts';
import type { UserSchema } from './user-schema.ts';

const CAS_ATTEMPTS = 5;

/**
 * At most one last-login write per user in this time: a login after a quiet spell writes at once, the
 * logins that follow within it share one write of the newest time at its end. A script or a storm logging
 * one account in ten times a second otherwise paid a status patch per login (and the conflicts it caused
 * the admission ledger's writes of the same User), a third of what a login cost the kube-apiserver.
 */
export const LOGIN_TIME_WRITE_INTERVAL_MS = 1000;

/** A last-login write waiting for its turn. */
interface PendingLoginTime {
  /** The newest login time of the user so far (RFC 3339). */
  time: string;
  written: Promise<void>;
  /** Ends the wait for the interval (at shutdown). */
  writeNow: () => void;
}

/**
 * Users, read from the watch-backed cache (read through to the apiserver on a miss), and the status
 * writes of login bookkeeping: failure counts, lockout, last login. The counting writes and state changes
 * are compare-and-swap on the User's resourceVersion, so concurrent logins on several replicas never lose
 * a count; a last-login time alone is a merge patch of the status subresource (the last writer wins).
 */
export class UserStore {
  readonly #api: IamApi;
  readonly #informer: Informer<UserObject>;
  readonly #cache: ReadThroughCache<UserObject>;
  readonly #policy: LockoutPolicy;
  readonly #logger: Logger;
  readonly #nowMs: () => number;
  readonly #schema: () => UserSchema;
  readonly #ledgerAnnotation: string;
  /** The last write of each user this replica has running (see #serially). */
  readonly #writes = new Map<string, Promise<void>>();
  /** Per user, the last-login patch waiting for its turn (see recordSuccess). */
  readonly #loginTimes = new Map<string, PendingLoginTime>();
  /** Per user, when this replica last sent a last-login patch (dropped once the interval has passed). */
  readonly #loginTimeSentAt = new Map<string, number>();
  /** The admission ledgers of known users: an annotation on the User (see docs/authentication.md). */
  readonly ledgers: LedgerStore;

  constructor(deps: {
    api: IamApi;
    informer: Informer<UserObject>;
    policy: LockoutPolicy;
    logger: Logger;
    /** Which CRD shape was found at start; without a status subresource, status is written with the object. */
    schema?: () => UserSchema;
    nowMs?: () => number;
  }) {
    this.#schema =
      deps.schema ?? (() => ({ statusSubresource: true, loginRecords: false, loginThrottles: true }));
    this.#ledgerAnnotation = `${deps.api.iam.group}/login-attempts`;
    this.ledgers = {
      peek: (name) => this.#ledgerOf(this.#cache.peek(name)),
      queueOf: (name) => `user/${name}`,
      update: (name, change) => this.#updateLedger(name, change),
    };
    this.#api = deps.api;
    this.#informer = deps.informer;
    this.#policy = deps.policy;
    this.#logger = deps.logger;
    this.#nowMs = deps.nowMs ?? Date.now;
    this.#cache = new ReadThroughCache<UserObject>({
      cache: deps.informer,
      fetch: (name) => this.#api.get<UserObject>('users', name),
      positiveTtlMs: 2000,
      negativeTtlMs: 2000,
      maxEntries: 10_000,
      nowMs: this.#nowMs,
    });
  }

  close(): void {
    this.#cache.close();
  }

  /** The user for a bearer token: cache only, no I/O on the hot path. */
  peek(username: string): UserObject | undefined {
    return this.#cache.peek(username);
  }

  /** The user, reading through to the apiserver if the cache does not know the name (yet). */
  get(username: string): Promise<UserObject | undefined> {
    return this.#cache.get(username);
  }

  /**
   * A login name: the user's name, or an e-mail address matching exactly one user's spec.email. Once the
   * cache has synced, an unknown name is not read through to the apiserver: that round trip would make
   * answers for unknown users measurably slower than for known ones (a user created a moment ago can log
   * in as soon as the watch delivers it, within milliseconds).
   */
  async findForLogin(login: string): Promise<UserObject | undefined> {
    if (!login.includes('@')) {
      if (!isObjectName(login)) return undefined;
      return this.#informer.synced ? this.#cache.peek(login) : this.get(login);
    }
    const wanted = login.toLowerCase();
    const matches = this.#informer.list().filter((u) => u.spec?.email?.toLowerCase() === wanted);
    return matches.length === 1 ? matches[0] : undefined;
  }

  /**
   * Creates a user (its password already hashed) and remembers it: it can log in at once on this
   * replica. A user created without a state is made Active, as the original's controller does once the
   * password is hashed (here it always is): the console shows a user without one as Pending.
   */
  async create(user: UserObject): Promise<UserObject> {
    const created = await this.#api.create<UserObject>('users', user);
    this.#cache.remember(created);
    if (created.status?.state !== undefined) return created;
    // Only what the console shows depends on it: a failure leaves the user created, and able to log in.
    try {
      return (await this.#updateStatus(created, (status) => ({ ...status, state: 'Active' }))) ?? created;
    } catch (err) {
      this.#logger.warn('could not mark a new user Active', {
        user: created.metadata.name,
        error: String(err),
      });
      return created;
    }
  }

  /** Compare-and-swap on the object's resourceVersion (ConflictError when it changed). */
  async replace(user: UserObject): Promise<UserObject> {
    const updated = await this.#api.replace<UserObject>('users', user);
    this.#cache.remember(updated);
    return updated;
  }

  /**
   * Changes a user by compare-and-swap, re-reading and retrying when a concurrent write (a login's
   * ledger, say) got there first; undefined when the user is gone.
   */
  async update(name: string, change: (user: UserObject) => UserObject): Promise<UserObject | undefined> {
    let current = await this.#cache.getFresh(name);
    for (let attempt = 1; current; attempt++) {
      try {
        return await this.replace(change(current));
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= CAS_ATTEMPTS) throw err;
        current = await this.#cache.getFresh(name);
      }
    }
    return undefined;
  }

  /** Deletes a user; its bearer tokens stop working on this replica at once (the cache forgets it). */
  async remove(name: string): Promise<boolean> {
    // The uid lets a user created again under the name be remembered, while the old one's late answers are not.
    const uid = this.#cache.peek(name)?.metadata?.uid;
    const existed = await this.#api.delete('users', name);
    this.#cache.forget(name, uid);
    return existed;
  }

  /** Shows a lock the admission ledger just set in the original's shape (state AuthLimitExceeded). */
  async recordLock(user: UserObject): Promise<void> {
    await this.#updateStatus(user, (status) => statusAfterLock(status, this.#nowMs(), this.#policy));
  }

  #ledgerOf(user: UserObject | undefined): AttemptLedger {
    return decodeLedger(user?.metadata.annotations?.[this.#ledgerAnnotation]);
  }

  /**
   * One write of a user's ledger (compare-and-swap on the main resource). A change that settles a
   * successful login also records the login time, in the same write where status is part of the object
   * (the original's CRD); with a status subresource OAuthService writes it with `recordSuccess`.
   */
  #updateLedger<R>(name: string, change: (ledger: AttemptLedger) => LedgerChange<R>): Promise<R> {
    return this.#serially(name, () =>
      writeLedgerChange({
        read: async () => ({ object: await this.#cache.get(name), fresh: false }),
        readFresh: () => this.#cache.getFresh(name),
        apply: (current) => {
          if (!current) throw new LedgerContendedError(`user ${name} disappeared`);
          const { ledger, result, loggedInAtMs, confirm } = change(this.#ledgerOf(current));
          const withStatus = loggedInAtMs !== undefined && this.writesLoginTimeWithLedger;
          if (!ledger && !withStatus) return { result, ...(confirm ? { confirm } : {}) };
          const body: UserObject = ledger
            ? {
                ...current,
                metadata: {
                  ...current.metadata,
                  annotations: {
                    ...current.metadata.annotations,
                    [this.#ledgerAnnotation]: encodeLedger(ledger),
                  },
                },
              }
            : current;
          const write = async () => {
            // The main resource, not /status: annotations are metadata, and the original's CRD keeps unknown
            // status fields out (its schema prunes them).
            const updated = await this.#api.replace<UserObject>(
              'users',
              withStatus
                ? { ...body, status: statusAfterSuccess(current.status, loggedInAtMs, this.#policy) }
                : body,
            );
            this.#cache.remember(updated);
          };
          return { write, result };
        },
      }),
    );
  }

  /**
   * Whether a successful login's time is written with its ledger settlement (status is part of the object:
   * the original's CRD) rather than by `recordSuccess`.
   */
  get writesLoginTimeWithLedger(): boolean {
    return !this.#schema().statusSubresource;
  }

  /**
   * Runs one write of a user after this replica's earlier ones of the same user: the ledger's writes and
   * the last-login patch would otherwise race, and each change of the resourceVersion costs the other a
   * conflict, a re-read and a retry.
   */
  #serially<R>(name: string, task: () => Promise<R>): Promise<R> {
    const previous = this.#writes.get(name) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.#writes.set(name, tail);
    void tail.then(() => {
      if (this.#writes.get(name) === tail) this.#writes.delete(name);
    });
    return run;
  }

  recordSuccess(user: UserObject): Promise<void> {
    const next = statusAfterSuccess(user.status, this.#nowMs(), this.#policy);
    const onlyTheTime = isDeepStrictEqual(
      { ...next, lastLoginTime: undefined },
      { ...user.status, lastLoginTime: undefined },
    );
    // Without a status subresource (the original's CRD) a patch would need `patch` on the Users themselves,
    // which the chart does not grant: there the whole status is written as before.
    if (!onlyTheTime || !this.#schema().statusSubresource)
      return this.#updateStatus(user, (status) =>
        statusAfterSuccess(status, this.#nowMs(), this.#policy),
      ).then(() => undefined);
    // Only the time changes. It is written as a merge patch without a precondition: concurrent logins of
    // one user then never conflict. A compare-and-swap here lost to each admission-ledger write on the same
    // User and paid a re-read and a retry for it (130 conflicts for 83 logins in a 20-client storm). A lock
    // written meanwhile stays, since the patch names no other field.
    // Logins of one user that arrive while a patch waits (for the interval, or its turn) share it: it
    // writes the newest time.
    const name = user.metadata.name;
    const waiting = this.#loginTimes.get(name);
    if (waiting) {
      waiting.time = next.lastLoginTime!;
      return waiting.written;
    }
    const sentAt = this.#loginTimeSentAt.get(name);
    const waitMs = sentAt === undefined ? 0 : sentAt + LOGIN_TIME_WRITE_INTERVAL_MS - this.#nowMs();
    const entry: PendingLoginTime = {
      time: next.lastLoginTime!,
      written: Promise.resolve(),
      writeNow: () => {},
    };
    this.#loginTimes.set(name, entry);
    const turn =
      waitMs <= 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, waitMs);
            // Not what keeps the process alive: stop() writes what still waits (flushLoginTimes).
            timer.unref();
            entry.writeNow = () => {
              clearTimeout(timer);
              resolve();
            };
          });
    entry.written = turn.then(() =>
      this.#serially(name, async () => {
        this.#loginTimes.delete(name);
        this.#markLoginTimeSent(name);
        const updated = await this.#api.mergePatchStatus<UserObject>('users', name, {
          status: { lastLoginTime: entry.time },
        });
        this.#cache.remember(updated);
      }),
    );
    return entry.written;
  }

  /** Writes the last-login times still waiting for their interval (at shutdown: none is left behind). */
  async flushLoginTimes(): Promise<void> {
    const waiting = [...this.#loginTimes.values()];
    for (const entry of waiting) entry.writeNow();
    await Promise.allSettled(waiting.map((entry) => entry.written));
  }

  #markLoginTimeSent(name: string): void {
    const at = this.#nowMs();
    this.#loginTimeSentAt.set(name, at);
    // Forgotten once the interval has passed (the next login writes at once): no entry per user who ever
    // logged in.
    setTimeout(() => {
      if (this.#loginTimeSentAt.get(name) === at) this.#loginTimeSentAt.delete(name);
    }, LOGIN_TIME_WRITE_INTERVAL_MS).unref();
  }

  /** Turns locks whose window has passed back to Active, so `kubectl get users` shows the truth. */
  async liftExpiredLocks(): Promise<number> {
    let lifted = 0;
    for (const user of this.#informer.list()) {
      if (user.status?.state !== 'AuthLimitExceeded') continue;
      const next = stripExpiredLock(user.status, this.#nowMs(), this.#policy);
      if (next.state === 'AuthLimitExceeded') continue;
      await this.#updateStatus(user, (status) => stripExpiredLock(status, this.#nowMs(), this.#policy));
      lifted++;
    }
    return lifted;
  }

  /** The user as written; undefined when it is gone. */
  async #updateStatus(
    user: UserObject,
    change: (status: UserStatus | undefined) => UserStatus,
  ): Promise<UserObject | undefined> {
    return this.#serially(user.metadata.name, () => this.#writeStatus(user, change));
  }

  async #writeStatus(
    user: UserObject,
    change: (status: UserStatus | undefined) => UserStatus,
  ): Promise<UserObject | undefined> {
    let current: UserObject | undefined = user;
    for (let attempt = 1; current; attempt++) {
      try {
        // Without a status subresource (the original's users CRD) status is part of the object.
        const updated = await this.#api.replace<UserObject>(
          'users',
          { ...current, status: change(current.status) },
          this.#schema().statusSubresource ? 'status' : undefined,
        );
        this.#cache.remember(updated);
        return updated;
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= CAS_ATTEMPTS) throw err;
        this.#logger.debug('user status changed concurrently, retrying', {
          user: user.metadata.name,
          attempt,
        });
        current = await this.#cache.getFresh(user.metadata.name);
      }
    }
    return undefined;
  }
}

/** A Kubernetes object name (DNS subdomain); anything else cannot be a user and is not looked up. */
function isObjectName(name: string): boolean {
  return name.length <= 253 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name);
}
