import { configRef, kubeConfigRef, loggerRef, registryRef } from '../host-services.ts';
import { serviceRef, type Module } from '../kernel/module.ts';
import { AccessReviewer, subjectAccessReview } from './access-review.ts';

/** Kubernetes RBAC decisions (SubjectAccessReview, cached) for features that serve from caches. */
export const accessReviewerRef = serviceRef<AccessReviewer>('access-reviewer');

/** Provides the access reviewer; contributes nothing to the transport. */
export const accessModule: Module<never> = {
  name: 'access',
  requires: [configRef, kubeConfigRef, loggerRef, registryRef],
  provides: [accessReviewerRef],
  register(ctx) {
    const config = ctx.get(configRef).authz;
    const reviewer = new AccessReviewer({
      review: subjectAccessReview(ctx.get(kubeConfigRef), config.reviewTimeoutSeconds * 1000),
      allowedTtlMs: config.allowedTtlSeconds * 1000,
      deniedTtlMs: config.deniedTtlSeconds * 1000,
      staleIfErrorMs: config.staleIfErrorSeconds * 1000,
      maxEntries: config.cacheEntries,
      registry: ctx.get(registryRef),
      logger: ctx.get(loggerRef),
    });
    ctx.provide(accessReviewerRef, reviewer);
    // Passing while reviews fail (within or beyond the staleness bound): see ReviewHealth for why.
    return { readiness: { 'authz-reviews': () => reviewer.readiness() } };
  },
};
