import type { Registry } from 'prom-client';
import type { Logger } from '../observability/logger.ts';
import { counter, gauge } from '../observability/metrics.ts';

/** How a readiness check reports itself: passing or not, and a line for `/readyz?verbose`. */
export interface ReviewHealthReport {
  ok: boolean;
  detail?: string;
}

export interface ReviewHealthOptions {
  registry: Registry;
  logger: Logger;
  nowMs: () => number;
  /** The oldest an answer may be and still be served (the longest TTL plus the stale-if-error bound). */
  maxServedAgeMs: number;
}

/**
 * Whether the authority (the kube-apiserver answering SubjectAccessReviews) is answering, and how stale
 * the answers served meanwhile are. It turns "unreachable" on when a review fails or keeps a request
 * waiting past the revalidation wait, and off when a review answers. While it is on, the reviewer serves
 * cached answers at once instead of waiting for a review to time out.
 *
 * Made visible three ways: metrics, a readiness line and (by the caller) a header on each response.
 * The readiness check itself keeps passing: every replica asks the same kube-apiserver, so failing
 * readiness would take all of them out of service at once and turn "answers up to N seconds old" (and
 * the OAuth endpoints, which need no review) into no answer at all.
 */
export class ReviewHealth {
  readonly #options: ReviewHealthOptions;
  /** When reviews started failing (or hanging); undefined while the authority answers. */
  #unreachableSinceMs: number | undefined;
  /** Age of the oldest stale answer served since the authority became unreachable. */
  #oldestServedAgeMs = 0;
  readonly #failures;

  constructor(options: ReviewHealthOptions) {
    this.#options = options;
    this.#failures = counter(options.registry, {
      name: 'platform_authz_review_failures_total',
      help: 'SubjectAccessReviews that failed or timed out (the cached answer, if young enough, was served instead).',
    });
    gauge(options.registry, {
      name: 'platform_authz_unreachable_seconds',
      help: 'Seconds since SubjectAccessReviews started failing or hanging; 0 while the kube-apiserver answers them.',
      collect: (g) => g.set(this.unreachableSeconds()),
    });
    gauge(options.registry, {
      name: 'platform_authz_stale_answer_age_seconds',
      help: 'Age of the oldest cached authorization answer served stale since reviews started failing; 0 while they answer.',
      collect: (g) => g.set(Math.floor(this.#oldestServedAgeMs / 1000)),
    });
  }

  get unreachable(): boolean {
    return this.#unreachableSinceMs !== undefined;
  }

  unreachableSeconds(): number {
    return this.#unreachableSinceMs === undefined
      ? 0
      : Math.floor((this.#options.nowMs() - this.#unreachableSinceMs) / 1000);
  }

  /** A review answered: the authority is back. */
  answered(): void {
    if (this.#unreachableSinceMs === undefined) return;
    this.#options.logger.info('SubjectAccessReviews answer again; authorization answers are fresh', {
      unreachableSeconds: this.unreachableSeconds(),
      oldestServedAgeSeconds: Math.floor(this.#oldestServedAgeMs / 1000),
    });
    this.#unreachableSinceMs = undefined;
    this.#oldestServedAgeMs = 0;
  }

  /** A review failed (error or timeout). */
  failed(error: Error, startedAtMs: number): void {
    this.#failures.inc();
    this.#markUnreachable(startedAtMs, error.message);
  }

  /** A review started at `startedAtMs` has kept a request waiting past the revalidation wait. */
  hanging(startedAtMs: number): void {
    this.#markUnreachable(startedAtMs, 'a SubjectAccessReview is taking longer than the revalidation wait');
  }

  /** A cached answer this old was served because no fresh one could be had. */
  servedStale(ageMs: number): void {
    if (ageMs > this.#oldestServedAgeMs) this.#oldestServedAgeMs = ageMs;
  }

  /**
   * The readiness line: always passing (see the class comment), with the outage described while there is
   * one. `/readyz` is anonymous, so the line names no error text (it could name hosts); the log has it.
   */
  report(): ReviewHealthReport {
    if (this.#unreachableSinceMs === undefined) return { ok: true };
    const boundSeconds = Math.floor(this.#options.maxServedAgeMs / 1000);
    const served = Math.floor(this.#oldestServedAgeMs / 1000);
    const parts = [
      `SubjectAccessReviews failing for ${this.unreachableSeconds()}s`,
      `serving cached answers (oldest served ${served}s, limit ${boundSeconds}s; older ones answer 503)`,
    ];
    return { ok: true, detail: parts.join('; ') };
  }

  #markUnreachable(sinceMs: number, why: string): void {
    if (this.#unreachableSinceMs !== undefined) return;
    this.#unreachableSinceMs = sinceMs;
    this.#options.logger.warn(
      'SubjectAccessReviews are not answering; serving cached authorization answers',
      {
        reason: why,
      },
    );
  }
}
