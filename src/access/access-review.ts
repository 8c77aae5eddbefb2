import type { KubeConfig } from '@kubernetes/client-node';
import type { Histogram, Registry } from 'prom-client';
import type { Identity } from '../kernel/identity.ts';
import { kubeRequest } from '../cluster/kube-request.ts';
import { ApiError } from '../kernel/api-error.ts';
import type { Logger } from '../observability/logger.ts';
import { gauge, histogram } from '../observability/metrics.ts';
import { type CounterSeries, seriesCounter, type SeriesCounter } from '../observability/series-metrics.ts';
import { ReviewHealth, type ReviewHealthReport } from './review-health.ts';
import { TtlCache } from './ttl-cache.ts';

/** What is being asked, in the terms of a SubjectAccessReview's resourceAttributes. */
export interface ResourceAttributes {
  verb: string;
  /** API group; '' for the core group. */
  group: string;
  resource: string;
  name?: string;
  namespace?: string;
  subresource?: string;
}

export interface ReviewAnswer {
  allowed: boolean;
  /** Why, when the authorizer said (never shown to callers: it can name bindings). */
  reason?: string;
}

/** Asks the authority once. The production one is a SubjectAccessReview; unit tests pass a fake. */
export type ReviewFn = (identity: Identity, attributes: ResourceAttributes) => Promise<ReviewAnswer>;

export type DecisionSource = 'cache' | 'apiserver' | 'stale';

export interface Decision extends ReviewAnswer {
  source: DecisionSource;
  /** Whole seconds since the answer was given by the authority (0 unless `source` is 'stale'). */
  ageSeconds: number;
}

/** Says how old a stale authorization answer is, on responses that relied on one. */
export const AUTHZ_STALE_HEADER = 'X-Authorization-Stale-Seconds';

/**
 * An answer in the cache. What serving it fresh takes, the decision and the series it is counted in, is
 * made at its first fresh use and then shared: most requests are answered from the cache.
 */
interface Held {
  answer: ReviewAnswer;
  servedFresh?: { decision: Decision; checks: CounterSeries };
}

/** A review's outcome, wrapped so that a pending promise can be told apart from a timer. */
interface Pending {
  answer: ReviewAnswer;
}

export interface AccessReviewerOptions {
  review: ReviewFn;
  /** How long an "allowed" answer is reused. */
  allowedTtlMs: number;
  /** How long a "denied" answer is reused: short, so a new binding takes effect quickly. */
  deniedTtlMs: number;
  /**
   * How long past its TTL an answer may still be used when the authority cannot be reached. While the
   * kube-apiserver is down nobody can change RBAC through it, so the last answer is still the best one.
   */
  staleIfErrorMs: number;
  /**
   * How long a request with an expired (but still usable) cached answer waits for the review that
   * refreshes it before it is served the cached answer. Not waited at all while reviews are failing.
   */
  revalidateWaitMs?: number;
  maxEntries: number;
  registry: Registry;
  logger: Logger;
  nowMs?: () => number;
}

/**
 * A healthy kube-apiserver answers a SubjectAccessReview in milliseconds; one that has not answered
 * within this is treated as not answering for requests that have a usable cached answer.
 */
export const DEFAULT_REVALIDATE_WAIT_MS = 250;

/**
 * "May this identity do this?", decided by Kubernetes RBAC through SubjectAccessReviews, with answers
 * cached briefly in a bounded cache and concurrent identical questions asked only once.
 */
export class AccessReviewer {
  readonly #options: AccessReviewerOptions & { revalidateWaitMs: number };
  readonly #health: ReviewHealth;
  readonly #cache: TtlCache<Held>;
  // The caller's part of a cache key, per identity object: the authenticator shares one between requests.
  readonly #callerKeys = new WeakMap<Identity, string>();
  // The question's part, per frozen attributes object: a route that always asks the same question keeps one.
  readonly #questionKeys = new WeakMap<ResourceAttributes, string>();
  readonly #inFlight = new Map<string, { promise: Promise<Pending>; startedAtMs: number }>();
  readonly #nowMs: () => number;
  /** Counts `rbacChanged` calls: a review started before the latest one does not store its answer. */
  #generation = 0;
  readonly #checks: SeriesCounter<'verb' | 'resource' | 'decision' | 'source'>;
  readonly #reviewSeconds: Histogram<'outcome'>;

  constructor(options: AccessReviewerOptions) {
    this.#options = { revalidateWaitMs: DEFAULT_REVALIDATE_WAIT_MS, ...options };
    this.#nowMs = options.nowMs ?? Date.now;
    this.#health = new ReviewHealth({
      registry: options.registry,
      logger: options.logger,
      nowMs: this.#nowMs,
      maxServedAgeMs: Math.max(options.allowedTtlMs, options.deniedTtlMs) + options.staleIfErrorMs,
    });
    this.#cache = new TtlCache({ maxEntries: options.maxEntries, nowMs: this.#nowMs });
    this.#checks = seriesCounter(options.registry, {
      name: 'platform_authz_checks_total',
      help: 'Authorization checks by verb, resource, decision (allowed, denied, error) and where the answer came from (cache, apiserver, stale).',
      labelNames: ['verb', 'resource', 'decision', 'source'],
    });
    this.#reviewSeconds = histogram(options.registry, {
      name: 'platform_authz_review_duration_seconds',
      help: 'Duration of SubjectAccessReview calls to the kube-apiserver, by outcome (answered, error).',
      labelNames: ['outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    });
    const cache = this.#cache;
    gauge(options.registry, {
      name: 'platform_authz_cache_entries',
      help: 'Authorization answers held in the cache.',
      collect: (g) => g.set(cache.size),
    });
  }

  /**
   * The decision for this identity and these attributes. Throws when no answer can be had.
   *
   * A fresh cached answer is served as it is. An expired one that is still young enough (its TTL plus
   * `staleIfErrorMs`) is revalidated by one review per question (single-flight): a request waits for it
   * at most `revalidateWaitMs`, and not at all while reviews are known to be failing; meanwhile it gets
   * the cached answer (`source: 'stale'`), and the review's answer, when it comes, is stored for the
   * next request. Without a young-enough answer the request waits for the review (up to its timeout).
   */
  async check(identity: Identity, attributes: ResourceAttributes): Promise<Decision> {
    const key = this.#callerKey(identity) + this.#questionKey(attributes);
    const cached = this.#cache.get(key);
    const now = this.#nowMs();
    if (cached?.fresh) {
      const served = (cached.value.servedFresh ??= {
        decision: Object.freeze({ ...cached.value.answer, source: 'cache', ageSeconds: 0 }),
        checks: this.#checks.series(checkLabels(attributes, cached.value.answer.allowed, 'cache')),
      });
      served.checks.inc();
      return served.decision;
    }

    const usable =
      cached && now - cached.storedAtMs <= this.#ttlMs(cached.value.answer) + this.#options.staleIfErrorMs
        ? cached
        : undefined;
    const review = this.#askOnce(key, identity, attributes);
    if (!usable) {
      let answer: ReviewAnswer;
      try {
        answer = (await review).answer;
      } catch (err) {
        this.#checks.inc({
          verb: attributes.verb,
          resource: attributes.resource,
          decision: 'error',
          source: 'apiserver',
        });
        throw err;
      }
      return this.#count(attributes, { ...answer, source: 'apiserver', ageSeconds: 0 });
    }

    if (!this.#health.unreachable) {
      const answer = await this.#within(key, review, this.#options.revalidateWaitMs);
      if (answer) return this.#count(attributes, { ...answer, source: 'apiserver', ageSeconds: 0 });
    }
    const ageMs = this.#nowMs() - usable.storedAtMs;
    this.#health.servedStale(ageMs);
    return this.#count(attributes, {
      ...usable.value.answer,
      source: 'stale',
      ageSeconds: Math.floor(ageMs / 1000),
    });
  }

  /**
   * Kubernetes RBAC changed (a role or binding was added, changed or removed): every cached answer is
   * forgotten and reviews already under way keep theirs to themselves, so a member just removed is not
   * allowed on for an answer's TTL, nor one just invited refused. Their requests ask again.
   */
  rbacChanged(): void {
    this.#generation++;
    this.#cache.clear();
    this.#inFlight.clear();
  }

  /** The readiness line for `/readyz?verbose`: passing, with the outage described while reviews fail. */
  readiness(): ReviewHealthReport {
    return this.#health.report();
  }

  /** Resolves when allowed; otherwise throws the ApiError to answer with (403, or 503 when undecidable). */
  async authorize(identity: Identity, attributes: ResourceAttributes): Promise<Decision> {
    let decision: Decision;
    try {
      decision = await this.check(identity, attributes);
    } catch (err) {
      this.#options.logger.error('authorization check failed', {
        user: identity.username,
        verb: attributes.verb,
        resource: attributes.resource,
        error: (err as Error).message,
      });
      throw new ApiError('Unavailable', 'authorization check is temporarily unavailable', {
        retryAfterSeconds: 1,
      });
    }
    if (!decision.allowed) throw forbidden(identity, attributes);
    return decision;
  }

  #ttlMs(answer: ReviewAnswer): number {
    return answer.allowed ? this.#options.allowedTtlMs : this.#options.deniedTtlMs;
  }

  /**
   * The review's answer if it comes within `waitMs`; undefined when it fails or is still pending (it
   * goes on in the background and stores its answer; a hang marks the authority unreachable).
   */
  async #within(key: string, review: Promise<Pending>, waitMs: number): Promise<ReviewAnswer | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), waitMs);
      timer.unref();
    });
    try {
      const outcome = await Promise.race([review, timedOut]);
      if (outcome !== 'timeout') return outcome.answer;
      const flight = this.#inFlight.get(key);
      if (flight) this.#health.hanging(flight.startedAtMs);
      return undefined;
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** One review per question at a time; its answer is stored in the cache, its outcome in the health. */
  #askOnce(key: string, identity: Identity, attributes: ResourceAttributes): Promise<Pending> {
    const pending = this.#inFlight.get(key);
    if (pending) return pending.promise;
    const generation = this.#generation;
    const startedAtMs = this.#nowMs();
    const startedAt = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - startedAt) / 1e9;
    const asking = this.#options
      .review(identity, attributes)
      .then((answer): Pending => {
        this.#reviewSeconds.observe({ outcome: 'answered' }, seconds());
        if (generation === this.#generation) this.#cache.set(key, { answer }, this.#ttlMs(answer));
        this.#health.answered();
        return { answer };
      })
      .catch((err: unknown) => {
        this.#reviewSeconds.observe({ outcome: 'error' }, seconds());
        const error = err instanceof Error ? err : new Error(String(err));
        this.#health.failed(error, startedAtMs);
        this.#options.logger.warn('SubjectAccessReview failed', {
          user: identity.username,
          verb: attributes.verb,
          resource: attributes.resource,
          error: error.message,
        });
        throw error;
      })
      .finally(() => {
        if (this.#inFlight.get(key) === flight) this.#inFlight.delete(key);
      });
    // A background refresh nobody waits for must not become an unhandled rejection.
    asking.catch(() => undefined);
    const flight = { promise: asking, startedAtMs };
    this.#inFlight.set(key, flight);
    return asking;
  }

  #callerKey(identity: Identity): string {
    let caller = this.#callerKeys.get(identity);
    if (caller === undefined) {
      caller = JSON.stringify([identity.username, [...identity.groups].sort()]);
      this.#callerKeys.set(identity, caller);
    }
    return caller;
  }

  #questionKey(a: ResourceAttributes): string {
    // Only a frozen question, a route's constant, cannot change under its key; others are asked once anyway.
    const kept = Object.isFrozen(a);
    let question = kept ? this.#questionKeys.get(a) : undefined;
    if (question === undefined) {
      // Beside the caller's JSON array another JSON array still reads back one way: the key stays unambiguous.
      question = JSON.stringify([
        a.verb,
        a.group,
        a.resource,
        a.subresource ?? '',
        a.namespace ?? '',
        a.name ?? '',
      ]);
      if (kept) this.#questionKeys.set(a, question);
    }
    return question;
  }

  #count(attributes: ResourceAttributes, decision: Decision): Decision {
    this.#checks.inc(checkLabels(attributes, decision.allowed, decision.source));
    return decision;
  }
}

function checkLabels(attributes: ResourceAttributes, allowed: boolean, source: DecisionSource) {
  return {
    verb: attributes.verb,
    resource: attributes.resource,
    decision: allowed ? 'allowed' : 'denied',
    source,
  };
}

/** The kube-apiserver's own wording, so clients that parse it are not surprised. */
export function forbidden(identity: Identity, a: ResourceAttributes): ApiError {
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const subject = a.name ? `${resource} "${a.name}"` : resource;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return new ApiError(
    'Forbidden',
    `${subject} is forbidden: User "${identity.username}" cannot ${a.verb} resource "${resource}" in API group "${a.group}" ${scope}`,
    {
      details: {
        kind: a.resource,
        ...(a.name ? { name: a.name } : {}),
        ...(a.group ? { group: a.group } : {}),
      },
    },
  );
}

interface SubjectAccessReviewStatus {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/** The production ReviewFn: a SubjectAccessReview for the identity's user and groups. */
export function subjectAccessReview(kc: KubeConfig, timeoutMs: number): ReviewFn {
  return async (identity, a) => {
    const resourceAttributes: Record<string, string> = { verb: a.verb, group: a.group, resource: a.resource };
    if (a.name) resourceAttributes['name'] = a.name;
    if (a.namespace) resourceAttributes['namespace'] = a.namespace;
    if (a.subresource) resourceAttributes['subresource'] = a.subresource;
    const review = await kubeRequest<SubjectAccessReviewStatus>(
      kc,
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        method: 'POST',
        timeoutMs,
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: identity.username, groups: identity.groups, resourceAttributes },
        },
      },
    );
    const answer: ReviewAnswer = {
      allowed: review.status?.allowed === true && review.status.denied !== true,
    };
    const reason = review.status?.reason || review.status?.evaluationError;
    if (reason) answer.reason = reason;
    return answer;
  };
}
