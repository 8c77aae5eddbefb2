import type { Logger } from '../observability/logger.ts';
import type { ReconcileMetrics } from './reconcile-metrics.ts';

export interface WorkQueueOptions {
  /** The reconciler's name, for logs and metrics. */
  name: string;
  /** Brings one key's objects to their wanted state; throws to be retried with back-off. */
  handle(key: string): Promise<void>;
  /** Keys handled at once (never the same key twice at once). */
  concurrency: number;
  logger: Logger;
  metrics?: ReconcileMetrics;
  /** First retry delay after an error; doubles per failure of the key up to maxBackoffMs, with jitter. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * Keys waiting to be reconciled, as controllers queue them: a key queued twice is handled once, a key
 * that changes while it is being handled is handled again afterwards, and a key whose handling failed
 * is retried after a back-off that grows with its failures (a new event for it retries at once).
 */
export class WorkQueue {
  readonly #o: WorkQueueOptions;
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #active = new Map<string, Promise<void>>();
  readonly #again = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #retries = new Map<string, NodeJS.Timeout>();
  #running = false;
  #stopped = false;

  constructor(options: WorkQueueOptions) {
    this.#o = options;
    options.metrics?.trackQueue(options.name, () => this.depth);
  }

  /** Keys waiting (queued or waiting for a retry). */
  get depth(): number {
    return this.#queued.size + this.#retries.size;
  }

  add(key: string): void {
    if (this.#stopped) return;
    const retry = this.#retries.get(key);
    if (retry) {
      clearTimeout(retry);
      this.#retries.delete(key);
    }
    if (this.#active.has(key)) {
      this.#again.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#queue.push(key);
    this.#pump();
  }

  /** Starts handling keys (those added before wait until now). */
  start(): void {
    if (this.#stopped || this.#running) return;
    this.#running = true;
    this.#pump();
  }

  /** Takes no more keys, drops the waiting ones and waits for those being handled. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#running = false;
    for (const timer of this.#retries.values()) clearTimeout(timer);
    this.#retries.clear();
    this.#queue.length = 0;
    this.#queued.clear();
    this.#again.clear();
    await Promise.all(this.#active.values());
  }

  #pump(): void {
    while (this.#running && this.#active.size < this.#o.concurrency && this.#queue.length > 0) {
      const key = this.#queue.shift()!;
      this.#queued.delete(key);
      this.#active.set(key, this.#run(key));
    }
  }

  async #run(key: string): Promise<void> {
    const { name, metrics, logger } = this.#o;
    const started = performance.now();
    try {
      await this.#o.handle(key);
      this.#failures.delete(key);
      metrics?.observe(name, 'success', (performance.now() - started) / 1000);
    } catch (err) {
      metrics?.observe(name, 'error', (performance.now() - started) / 1000);
      const failures = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, failures);
      const delayMs = this.#backoff(failures);
      logger.warn('reconcile failed, retrying', {
        reconciler: name,
        key,
        failures,
        retryInMs: Math.round(delayMs),
        error: err instanceof Error ? err.message : String(err),
      });
      if (!this.#stopped) {
        this.#retries.set(
          key,
          setTimeout(() => {
            this.#retries.delete(key);
            this.add(key);
          }, delayMs),
        );
      }
    } finally {
      this.#active.delete(key);
      if (this.#again.delete(key)) this.add(key);
      this.#pump();
    }
  }

  #backoff(failures: number): number {
    const initial = this.#o.initialBackoffMs ?? 100;
    const max = this.#o.maxBackoffMs ?? 30_000;
    return Math.min(max, initial * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);
  }
}
