import type { Logger } from '../observability/logger.ts';
import type { ReconcileMetrics } from './reconcile-metrics.ts';

/** Background work that must run in one replica at a time (it writes to the cluster). */
export interface Reconciler {
  readonly name: string;
  /**
   * Starts the work: called when this replica becomes the leader. Must return quickly (start watches,
   * do not wait for them); it catches up on what happened while nobody ran it.
   */
  start(): void | Promise<void>;
  /** Stops the work and waits for the step in progress: called when leadership ends. */
  stop(): Promise<void>;
}

/** What the runner needs of an election (LeaderElector). */
export interface Election {
  readonly isLeader: boolean;
  readonly identity: string;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Runs the registered reconcilers only while this replica leads, and stops them when it stops
 * leading. Start and stop of the reconcilers happen one transition at a time, in order.
 */
export class OneReplicaRunner {
  readonly #reconcilers = new Set<Reconciler>();
  readonly #running = new Set<Reconciler>();
  readonly #logger: Logger;
  readonly #metrics: ReconcileMetrics | undefined;
  #election: Election | undefined;
  #leading = false;
  #transitions: Promise<void> = Promise.resolve();

  constructor(deps: { logger: Logger; metrics?: ReconcileMetrics }) {
    this.#logger = deps.logger;
    this.#metrics = deps.metrics;
  }

  /** True while this replica holds the lease (and so runs the reconcilers). */
  get isLeader(): boolean {
    return this.#election?.isLeader ?? false;
  }

  /** Called by the election (the elector's onStartedLeading). */
  startedLeading(): Promise<void> {
    this.#metrics?.leaderChange('acquired');
    return this.#transition(async () => {
      this.#leading = true;
      for (const reconciler of this.#reconcilers) await this.#startOne(reconciler);
    });
  }

  /** Called by the election (the elector's onStoppedLeading); `change` says why. */
  stoppedLeading(change: 'lost' | 'released'): Promise<void> {
    this.#metrics?.leaderChange(change);
    return this.#transition(async () => {
      this.#leading = false;
      await Promise.all([...this.#running].map((r) => this.#stopOne(r)));
    });
  }

  /** Registers a reconciler (started at once while leading); returns the function that removes it. */
  add(reconciler: Reconciler): () => Promise<void> {
    this.#reconcilers.add(reconciler);
    void this.#transition(async () => {
      if (this.#leading && this.#reconcilers.has(reconciler)) await this.#startOne(reconciler);
    });
    return () => {
      this.#reconcilers.delete(reconciler);
      return this.#transition(() => this.#stopOne(reconciler));
    };
  }

  /** Starts competing for leadership with this election. */
  start(election: Election): void {
    this.#election = election;
    election.start();
  }

  /** Stops competing: a leader stops its reconcilers, then releases the lease. */
  async stop(): Promise<void> {
    await this.#election?.stop();
    await this.#transitions;
  }

  #transition(step: () => Promise<void>): Promise<void> {
    this.#transitions = this.#transitions.then(step);
    return this.#transitions;
  }

  async #startOne(reconciler: Reconciler): Promise<void> {
    if (this.#running.has(reconciler)) return;
    try {
      await reconciler.start();
      this.#running.add(reconciler);
      this.#logger.info('reconciler started', { reconciler: reconciler.name });
    } catch (err) {
      this.#logger.error('reconciler failed to start', { reconciler: reconciler.name, error: describe(err) });
    }
  }

  async #stopOne(reconciler: Reconciler): Promise<void> {
    if (!this.#running.delete(reconciler)) return;
    try {
      await reconciler.stop();
      this.#logger.info('reconciler stopped', { reconciler: reconciler.name });
    } catch (err) {
      this.#logger.warn('reconciler failed to stop', { reconciler: reconciler.name, error: describe(err) });
    }
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
