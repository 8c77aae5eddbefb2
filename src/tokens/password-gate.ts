import os from 'node:os';
import type { Registry } from 'prom-client';
import type { ApiError } from '../kernel/api-error.ts';
import { counter, gauge } from '../observability/metrics.ts';
import { oauthError } from './oauth-request.ts';

/** What the token service needs of password checking (PasswordVerifier, or a gate around it). */
export interface PasswordCheck {
  verify(password: string, storedHash: string | undefined): Promise<boolean>;
  /**
   * Throws the refusal `verify` would throw if asked now, so that a login bound to be refused does no
   * work first (its reservation in the login ledger is two writes to the kube-apiserver).
   */
  refuseIfFull?(): void;
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
        help: 'Password verifications running (bounded by auth.passwordConcurrency) and waiting (auth.passwordQueue).',
        labelNames: ['state'],
        collect: (g) => {
          g.set({ state: 'running' }, this.#running);
          g.set({ state: 'waiting' }, this.#waiting.length);
        },
      });
    }
  }

  get concurrency(): number {
    return this.#concurrency;
  }

  refuseIfFull(): void {
    if (this.#running < this.#concurrency || this.#waiting.length < this.#queueLimit) return;
    this.#refused?.inc();
    throw this.#busy();
  }

  async verify(password: string, storedHash: string | undefined): Promise<boolean> {
    if (this.#running < this.#concurrency) this.#running++;
    else {
      this.refuseIfFull();
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
