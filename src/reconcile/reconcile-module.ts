import { configRef, kubeConfigRef, loggerRef, registryRef } from '../host-services.ts';
import { serviceRef, type Module } from '../kernel/module.ts';
import { LeaderElector } from './leader-election.ts';
import { leaseHolderIdentity, leaseNamespace } from './lease-identity.ts';
import { kubeLeaseStore } from './lease-store.ts';
import { OneReplicaRunner } from './one-replica.ts';
import { createReconcileMetrics, type ReconcileMetrics } from './reconcile-metrics.ts';

/** Runs reconcilers in the one replica holding the leader lease; features add theirs to it. */
export const oneReplicaRef = serviceRef<OneReplicaRunner>('one-replica-runner');
/** The metrics reconcilers report to (their work queues). */
export const reconcileMetricsRef = serviceRef<ReconcileMetrics>('reconcile-metrics');

/**
 * Leader election for background work. Readiness does not depend on it: every replica serves, only the
 * leader also runs the reconcilers.
 */
export const reconcileModule: Module<never> = {
  name: 'leader-election',
  requires: [configRef, kubeConfigRef, loggerRef, registryRef],
  provides: [oneReplicaRef, reconcileMetricsRef],
  register(ctx) {
    const config = ctx.get(configRef);
    const settings = config.leaderElection;
    const logger = ctx.get(loggerRef);
    const metrics = createReconcileMetrics(ctx.get(registryRef), () => runner.isLeader);
    const runner = new OneReplicaRunner({ logger, metrics });
    ctx.provide(oneReplicaRef, runner);
    ctx.provide(reconcileMetricsRef, metrics);
    if (!settings.enabled) return { summary: { leaderLease: 'disabled' } };

    const namespace = leaseNamespace(settings.leaseNamespace, process.env);
    const name = settings.leaseName || `${config.platformName}-apiserver`;
    const timing = {
      leaseDurationMs: settings.leaseDurationSeconds * 1000,
      renewDeadlineMs: settings.renewDeadlineSeconds * 1000,
      retryPeriodMs: settings.retryPeriodSeconds * 1000,
    };
    const elector = new LeaderElector({
      ...timing,
      // A lease request that outlives the renew deadline is as good as failed.
      store: kubeLeaseStore(ctx.get(kubeConfigRef), namespace, name, timing.renewDeadlineMs),
      identity: leaseHolderIdentity(),
      logger,
      onStartedLeading: () => runner.startedLeading(),
      onStoppedLeading: (change) => runner.stoppedLeading(change),
    });
    return {
      start: () => runner.start(elector),
      stop: () => runner.stop(),
      summary: { leaderLease: `${namespace}/${name}` },
    };
  },
};
