import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { LeaderElector, type LeaderElectionTiming } from '../../src/reconcile/leader-election.ts';
import { leaseHolderIdentity, leaseNamespace } from '../../src/reconcile/lease-identity.ts';
import { microTime, type Lease, type LeaseSpec, type LeaseStore } from '../../src/reconcile/lease-store.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { waitFor } from '../cluster/wait-for.ts';

const silent = createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) });

/** One Lease held in memory with the kube-apiserver's compare-and-swap on resourceVersion. */
class SharedLease {
  lease: Lease | undefined;
  #version = 0;
  writes = 0;

  /** The store as one replica sees it; `cut()` makes every call of that replica fail. */
  view(): LeaseStore & { cut(): void } {
    let cut = false;
    const reachable = () => {
      if (cut) throw new Error('connection refused');
    };
    const write = (spec: LeaseSpec): Lease => {
      this.writes++;
      this.lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'l', namespace: 'ns', resourceVersion: String(++this.#version) },
        spec: structuredClone(spec),
      };
      return structuredClone(this.lease);
    };
    return {
      description: 'ns/l',
      cut: () => (cut = true),
      get: async () => {
        reachable();
        return this.lease && structuredClone(this.lease);
      },
      create: async (spec) => {
        reachable();
        return this.lease ? undefined : write(spec);
      },
      replace: async (current, spec) => {
        reachable();
        if (this.lease?.metadata.resourceVersion !== current.metadata.resourceVersion) return undefined;
        return write(spec);
      },
    };
  }
}

const FAST: LeaderElectionTiming = { leaseDurationMs: 600, renewDeadlineMs: 400, retryPeriodMs: 50 };

function elector(store: LeaseStore, name: string, log: string[], timing = FAST) {
  return new LeaderElector({
    ...timing,
    store,
    identity: name,
    logger: silent,
    onStartedLeading: () => void log.push(`${name} started`),
    onStoppedLeading: (change) => void log.push(`${name} stopped (${change})`),
  });
}

describe('leader election on a Lease (compare-and-swap)', () => {
  test('one of two replicas leads; a stopped leader releases and the other takes over at once', async (t) => {
    const shared = new SharedLease();
    const log: string[] = [];
    const a = elector(shared.view(), 'a', log);
    const b = elector(shared.view(), 'b', log);
    t.after(() => Promise.all([a.stop(), b.stop()]));
    a.start();
    await waitFor('a to lead', () => (a.isLeader ? true : undefined));
    b.start();
    // b keeps trying while a renews: it never leads.
    const writesBefore = shared.writes;
    await waitFor('a few renewals', () => (shared.writes >= writesBefore + 4 ? true : undefined));
    assert.equal(b.isLeader, false);
    assert.equal(shared.lease?.spec.holderIdentity, 'a');

    const stoppedAt = performance.now();
    await a.stop();
    assert.equal(shared.lease?.spec.holderIdentity, undefined, 'released: no holder');
    await waitFor('b to lead', () => (b.isLeader ? true : undefined));
    const takeoverMs = performance.now() - stoppedAt;
    assert.ok(takeoverMs < FAST.leaseDurationMs, `took over after ${Math.round(takeoverMs)} ms`);
    assert.equal(shared.lease?.spec.holderIdentity, 'b');
    assert.equal(shared.lease?.spec.leaseTransitions, 1, 'a created it (0) and released it, b took it');
    await b.stop();
    assert.deepEqual(log, ['a started', 'a stopped (released)', 'b started', 'b stopped (released)']);
  });

  test('a leader cut off from the kube-apiserver stops before anyone else may start', async (t) => {
    const shared = new SharedLease();
    const log: string[] = [];
    const viewA = shared.view();
    const a = elector(viewA, 'a', log);
    const b = elector(shared.view(), 'b', log);
    t.after(() => Promise.all([a.stop(), b.stop()]));
    a.start();
    await waitFor('a to lead', () => (a.isLeader ? true : undefined));
    b.start();
    await waitFor('b to see the lease', () => (shared.writes >= 3 ? true : undefined));
    viewA.cut();
    const cutAt = performance.now();
    await waitFor('b to lead', () => (b.isLeader ? true : undefined), { timeoutMs: 5000 });
    const takeoverMs = performance.now() - cutAt;
    // b waits the lease duration from its last sight of a renewal, by its own clock.
    assert.ok(takeoverMs >= FAST.leaseDurationMs - FAST.retryPeriodMs, `${Math.round(takeoverMs)} ms`);
    assert.deepEqual(log, ['a started', 'a stopped (lost)', 'b started'], 'never two leaders');
  });

  test('a leader whose lease someone else wrote reads it again and, still its holder, renews it', async (t) => {
    const shared = new SharedLease();
    const log: string[] = [];
    const view = shared.view();
    const a = elector(view, 'a', log);
    t.after(() => a.stop());
    a.start();
    await waitFor('a to lead', () => (a.isLeader ? true : undefined));
    // Someone else writes the lease (e.g. a manual edit): a's next renewal conflicts, reads it again,
    // sees itself as the holder and renews.
    await view.replace(shared.lease!, { ...shared.lease!.spec, leaseTransitions: 7 });
    const writes = shared.writes;
    await waitFor('a renewal after the conflict', () => (shared.writes >= writes + 2 ? true : undefined));
    assert.equal(a.isLeader, true);
    assert.equal(shared.lease?.spec.holderIdentity, 'a');
    assert.equal(shared.lease?.spec.leaseTransitions, 7);
  });

  test('timing that would let two replicas lead is refused', () => {
    assert.throws(
      () => elector(new SharedLease().view(), 'x', [], { ...FAST, renewDeadlineMs: FAST.leaseDurationMs }),
      /renew deadline must be shorter/,
    );
  });
});

describe('lease namespace, holder identity and times', () => {
  test('configured, else POD_NAMESPACE, else the ServiceAccount file, else default', () => {
    const noFile = () => {
      throw new Error('ENOENT');
    };
    assert.equal(leaseNamespace('ops', { POD_NAMESPACE: 'x' }, noFile), 'ops');
    assert.equal(
      leaseNamespace('', { POD_NAMESPACE: 'x' }, () => 'y'),
      'x',
    );
    assert.equal(
      leaseNamespace('', {}, () => 'platform-system\n'),
      'platform-system',
    );
    assert.equal(leaseNamespace('', {}, noFile), 'default');
  });

  test('the holder identity is the host name and a random part', () => {
    const one = leaseHolderIdentity('pod-a');
    assert.match(one, /^pod-a_[0-9a-f]{12}$/);
    assert.notEqual(leaseHolderIdentity('pod-a'), one);
  });

  test('lease times have six fractional digits (MicroTime)', () => {
    assert.equal(microTime(Date.UTC(2025, 0, 2, 3, 4, 5, 67)), '2025-01-02T03:04:05.067000Z');
  });
});
