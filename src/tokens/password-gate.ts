import os from 'node:os';
import type { Registry } from 'prom-client';
import type { ApiError } from '../kernel/api-error.ts';
import { counter, gauge } from '../observability/metrics.ts';
import { oauthError } from './oauth-request.ts';

/** What the token service needs of password checking (PasswordVerifier, or a gate around it). */
export interface PasswordCheck {
  verify(password: string, storedHash: string | undefined): Promise<boolean>;
  /**
   * Takes a place in the verification queue for a login that has work to do before its check (a
   * reservation in the login ledger: two writes to the kube-apiserver), or throws the refusal `verify`
   * would throw. The place counts until the returned function is called, which the caller does when it
   * calls `verify` (in the same turn of the event loop) or when the login ends without a check. Logins
   * beyond the queue are thus refused at once, before any work, however many arrive together.
   */
  enter?(): () => void;
}

export interface PasswordGateOptions {
  verifier: PasswordCheck;
  /** Verifications running at once; 0: one per CPU core. */
  concurrency: number;
  /** Verifications waiting for a slot; beyond them a login is refused at once. */
  queue: number;
  registry?: Registry;
  /** Number of CPU cores; tests pass one. */
  cores?: number;
}

/**
 * Bounds password verification. A bcrypt comparison is deliberately expensive (~0.1–0.3 s of a core) and
 * runs on libuv's thread pool: unbounded, a login storm takes every core and every pool thread (which
 * gzip and file reads share), and requests of other routes wait behind it. With at most one comparison
 * per core running and a short queue, logins still go as fast as the cores allow, and the excess is
 * refused immediately — RFC 6749 `temporarily_unavailable` with `Retry-After` — rather than made to wait
 * for seconds.
 */
export class PasswordGate implements PasswordCheck {
  readonly #verifier: PasswordCheck;
  readonly #concurrency: number;
  readonly #queueLimit: number;
  readonly #waiting: (() => void)[] = [];
  #running = 0;
  /** Logins holding a place (enter) that have not called verify yet. */
  #entering = 0;
  /** Moving average of one comparison, for Retry-After. */
  #averageMs = 250;
  readonly #refused: { inc(): void } | undefined;

  constructor(options: PasswordGateOptions) {
    this.#verifier = options.verifier;
    this.#concurrency =
      options.concurrency > 0 ? options.concurrency : Math.max(1, options.cores ?? os.availableParallelism());
    this.#queueLimit = options.queue;
    if (options.registry) {
      this.#refused = counter(options.registry, {
        name: 'platform_password_verifications_refused_total',
        help: 'Logins refused with 503 because every password-verification slot and queue place was taken.',
      });
      gauge(options.registry, {
        name: 'platform_password_verifications_in_flight',
        help: 'Password verifications running (bounded by auth.passwordConcurrency), waiting (auth.passwordQueue), and logins holding a place while their check is being admitted (entering).',
        labelNames: ['state'],
        collect: (g) => {
          g.set({ state: 'running' }, this.#running);
          g.set({ state: 'waiting' }, this.#waiting.length);
          g.set({ state: 'entering' }, this.#entering);
        },
      });
    }
  }

  get concurrency(): number {
    return this.#concurrency;
  }

  enter(): () => void {
    if (this.#running + this.#waiting.length + this.#entering >= this.#concurrency + this.#queueLimit)
      this.#refuse();
    this.#entering++;
    let held = true;
    return () => {
      if (held) this.#entering--;
      held = false;
    };
  }

  async verify(password: string, storedHash: string | undefined): Promise<boolean> {
    if (this.#running < this.#concurrency) this.#running++;
    else {
      // Never full for a login that held a place until now: the places taken never exceed the capacity.
      if (this.#waiting.length >= this.#queueLimit) this.#refuse();
      // The slot is handed over by the verification that finishes (#release), so #running stays counted.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    const startedAt = performance.now();
    try {
      return await this.#verifier.verify(password, storedHash);
    } finally {
      this.#averageMs = 0.8 * this.#averageMs + 0.2 * (performance.now() - startedAt);
      this.#release();
    }
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }

  #refuse(): never {
    this.#refused?.inc();
    throw this.#busy();
  }

  /** Retry-After: the time to work through a full queue, at least a second. */
  #busy(): ApiError {
    const seconds = Math.max(
      1,
      Math.ceil((((this.#queueLimit + this.#concurrency) / this.#concurrency) * this.#averageMs) / 1000),
    );
    return oauthError(
      'Unavailable',
      'temporarily_unavailable',
      `too many logins in progress; retry after ${seconds} s`,
      {
        retryAfterSeconds: seconds,
      },
    );
  }
}
