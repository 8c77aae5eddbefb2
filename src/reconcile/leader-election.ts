import { performance } from 'node:perf_hooks';
import type { Logger } from '../observability/logger.ts';
import { microTime, type Lease, type LeaseSpec, type LeaseStore } from './lease-store.ts';

export interface LeaderElectionTiming {
  /** How long a holder's lease stands without renewal before another replica may take it. */
  leaseDurationMs: number;
  /** A leader that has not renewed for this long stops leading (shorter than the lease duration). */
  renewDeadlineMs: number;
  /** Between two renewals, and between two attempts of a replica that does not lead. */
  retryPeriodMs: number;
}

export interface LeaderElectorOptions extends LeaderElectionTiming {
  store: LeaseStore;
  /** Unique per process: a successor with the same name must not pass for this one. */
  identity: string;
  logger: Logger;
  /** Awaited before the next renewal: keep it short. */
  onStartedLeading(): Promise<void> | void;
  /**
   * Awaited before the lease is released (`released`: on stop) or tried for again (`lost`: not renewed
   * within the renew deadline).
   */
  onStoppedLeading(change: 'lost' | 'released'): Promise<void> | void;
  /** Milliseconds for judging expiry, never set back (monotonic); injectable for tests. */
  monotonic?: () => number;
  /** Milliseconds since the epoch, written into the lease. */
  wallClock?: () => number;
}

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as Kubernetes' own controllers do it: every write
 * is a compare-and-swap on the lease's resourceVersion, so two replicas never both take it. A lease held
 * by another replica counts as expired when its resourceVersion has not changed for its
 * `leaseDurationSeconds` as measured by this process's own clock (no trust in other clocks). A leader
 * that cannot renew within the renew deadline stops leading before its lease could expire elsewhere;
 * on stop it releases the lease, so a successor takes over at its next attempt.
 */
export class LeaderElector {
  readonly #o: LeaderElectorOptions;
  readonly #monotonic: () => number;
  readonly #wallClock: () => number;
  #running = false;
  #leading = false;
  /** The lease as this process last read or wrote it. */
  #lease: Lease | undefined;
  #observedVersion: string | undefined;
  #observedAt = 0;
  #lastRenewAt = 0;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(options: LeaderElectorOptions) {
    if (options.renewDeadlineMs >= options.leaseDurationMs)
      throw new Error('the renew deadline must be shorter than the lease duration');
    this.#o = options;
    this.#monotonic = options.monotonic ?? (() => performance.now());
    this.#wallClock = options.wallClock ?? Date.now;
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  get identity(): string {
    return this.#o.identity;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops trying; a leader stops leading (awaiting onStoppedLeading) and then releases the lease. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#wake?.();
    await this.#loop;
    if (!this.#leading) return;
    this.#leading = false;
    await this.#o.onStoppedLeading('released');
    await this.#release().catch((err: unknown) =>
      this.#o.logger.warn('could not release the leader lease; a successor waits for it to expire', {
        lease: this.#o.store.description,
        error: describe(err),
      }),
    );
  }

  async #run(): Promise<void> {
    const { logger, store, retryPeriodMs, renewDeadlineMs } = this.#o;
    while (this.#running) {
      const ok = await this.#tryAcquireOrRenew().catch((err: unknown) => {
        logger.debug('leader lease request failed', { lease: store.description, error: describe(err) });
        return false;
      });
      if (!this.#running) break;
      if (ok) {
        this.#lastRenewAt = this.#monotonic();
        if (!this.#leading) {
          this.#leading = true;
          logger.info('leading', { lease: store.description, identity: this.#o.identity });
          await this.#o.onStartedLeading();
        }
      } else if (this.#leading && this.#monotonic() - this.#lastRenewAt >= renewDeadlineMs) {
        this.#leading = false;
        logger.warn('lost the leader lease: not renewed within the renew deadline', {
          lease: store.description,
          renewDeadlineMs,
        });
        await this.#o.onStoppedLeading('lost');
      }
      // A replica that does not lead tries a little less regularly, so several do not move in step.
      await this.#pause(this.#leading ? retryPeriodMs : retryPeriodMs * (1 + Math.random() * 0.2));
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { store, identity } = this.#o;
    const now = microTime(this.#wallClock());
    const durationSeconds = Math.ceil(this.#o.leaseDurationMs / 1000);
    // While leading, write over our own last version directly: one request per renewal.
    if (this.#leading && this.#lease) {
      const renewed = await store.replace(this.#lease, {
        ...this.#lease.spec,
        leaseDurationSeconds: durationSeconds,
        renewTime: now,
      });
      if (renewed) return this.#keep(renewed);
    }
    const lease = await store.get();
    if (!lease) {
      const created = await store.create({
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      });
      return created ? this.#keep(created) : false;
    }
    this.#observe(lease);
    const holder = lease.spec.holderIdentity;
    if (holder && holder !== identity && !this.#expired(lease)) return false;
    const spec: LeaseSpec =
      holder === identity
        ? { ...lease.spec, leaseDurationSeconds: durationSeconds, renewTime: now }
        : {
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: (lease.spec.leaseTransitions ?? 0) + 1,
          };
    const written = await store.replace(lease, spec);
    return written ? this.#keep(written) : false;
  }

  #keep(lease: Lease): true {
    this.#lease = lease;
    this.#observe(lease);
    return true;
  }

  #observe(lease: Lease): void {
    if (lease.metadata.resourceVersion === this.#observedVersion) return;
    this.#observedVersion = lease.metadata.resourceVersion;
    this.#observedAt = this.#monotonic();
  }

  #expired(lease: Lease): boolean {
    const seconds = lease.spec.leaseDurationSeconds ?? this.#o.leaseDurationMs / 1000;
    return this.#monotonic() >= this.#observedAt + seconds * 1000;
  }

  /** Empties the holder (as client-go does), so the next replica to try takes the lease at once. */
  async #release(): Promise<void> {
    const { store, identity } = this.#o;
    const now = microTime(this.#wallClock());
    const released = (lease: Lease): LeaseSpec => ({
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: lease.spec.leaseTransitions ?? 0,
    });
    let lease = this.#lease;
    for (let attempt = 0; attempt < 2 && lease; attempt++) {
      if (lease.spec.holderIdentity !== identity) return;
      if (await store.replace(lease, released(lease))) {
        this.#o.logger.info('released the leader lease', { lease: store.description });
        return;
      }
      lease = await store.get();
    }
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
