import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import type { Identity } from '../../src/kernel/identity.ts';
import {
  AccessReviewer,
  forbidden,
  type ResourceAttributes,
  type ReviewAnswer,
} from '../../src/access/access-review.ts';
import { TtlCache } from '../../src/access/ttl-cache.ts';
import { ApiError as HttpError } from '../../src/kernel/api-error.ts';
import { createLogger } from '../../src/observability/logger.ts';

const silent = createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) });

const alice: Identity = { username: 'alice', groups: ['developers', 'system:authenticated'] };
const listNodes: ResourceAttributes = { verb: 'list', group: '', resource: 'nodes' };

/** A scripted authority: answers from `allowed`, or fails while `down`. Counts questions. */
function authority() {
  const state = {
    allowed: new Set<string>(),
    down: false,
    calls: 0,
    release: undefined as (() => void) | undefined,
  };
  let gate: Promise<void> | undefined;
  return {
    state,
    hold() {
      gate = new Promise((resolve) => (state.release = resolve));
    },
    review: async (identity: Identity, a: ResourceAttributes): Promise<ReviewAnswer> => {
      state.calls++;
      if (gate) await gate;
      if (state.down) throw new Error('connect ECONNREFUSED');
      return { allowed: state.allowed.has(`${identity.username}:${a.verb}`) };
    },
  };
}

function reviewer(
  review: ReturnType<typeof authority>['review'],
  clock: { now: number },
  registry = new Registry(),
) {
  return new AccessReviewer({
    review,
    allowedTtlMs: 10_000,
    deniedTtlMs: 2_000,
    staleIfErrorMs: 60_000,
    revalidateWaitMs: 50,
    maxEntries: 3,
    registry,
    logger: silent,
    nowMs: () => clock.now,
  });
}

describe('ttl cache', () => {
  test('fresh until the TTL, then stale but still there; LRU eviction beyond the bound', () => {
    const clock = { now: 0 };
    const cache = new TtlCache<string>({ maxEntries: 2, nowMs: () => clock.now });
    cache.set('a', 'A', 100);
    assert.deepEqual(cache.get('a'), { value: 'A', fresh: true, storedAtMs: 0 });
    clock.now = 100;
    assert.equal(cache.get('a')?.fresh, false);
    cache.set('b', 'B', 100);
    cache.get('a'); // a is now most recently used
    cache.set('c', 'C', 100);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a')?.value, 'A');
  });

  test('repeated reads of one key keep the order a full LRU would', () => {
    const cache = new TtlCache<string>({ maxEntries: 3, nowMs: () => 0 });
    const evictedBy = (reads: string[]) => {
      cache.clear();
      for (const key of ['a', 'b', 'c']) cache.set(key, key, 100);
      for (const key of reads) cache.get(key);
      cache.set('d', 'd', 100);
      return ['a', 'b', 'c'].filter((key) => cache.get(key) === undefined);
    };
    assert.deepEqual(evictedBy([]), ['a']);
    assert.deepEqual(evictedBy(['c', 'c', 'a', 'a']), ['b']);
    assert.deepEqual(evictedBy(['a', 'a', 'b', 'b', 'c', 'c', 'a']), ['b']);
    assert.deepEqual(evictedBy(['b', 'a', 'b']), ['c']);
  });
});

describe('access reviewer', () => {
  test('asks once, then answers from the cache until the TTL ends', async () => {
    const auth = authority();
    auth.state.allowed.add('alice:list');
    const clock = { now: 0 };
    const r = reviewer(auth.review, clock);
    assert.deepEqual(await r.check(alice, listNodes), { allowed: true, source: 'apiserver', ageSeconds: 0 });
    clock.now = 9_999;
    assert.deepEqual(await r.check(alice, listNodes), { allowed: true, source: 'cache', ageSeconds: 0 });
    assert.equal(auth.state.calls, 1);
    clock.now = 10_000;
    assert.equal((await r.check(alice, listNodes)).source, 'apiserver');
    assert.equal(auth.state.calls, 2);
  });

  test('answers from the cache are each counted; a frozen question keeps its key, a mutable one is read anew', async () => {
    const auth = authority();
    auth.state.allowed.add('alice:list');
    auth.state.allowed.add('alice:get');
    const registry = new Registry();
    const r = reviewer(auth.review, { now: 0 }, registry);
    const frozen = Object.freeze({ ...listNodes });
    await r.check(alice, frozen);
    const hits = [
      await r.check(alice, frozen),
      await r.check(alice, { ...listNodes }),
      await r.check(alice, frozen),
    ];
    assert.ok(hits.every((hit) => hit.source === 'cache' && hit.allowed));
    assert.equal(auth.state.calls, 1, 'the same question, frozen or not');
    const mutable: ResourceAttributes = { ...listNodes, verb: 'get', name: 'n1' };
    await r.check(alice, mutable);
    mutable.name = 'n2';
    await r.check(alice, mutable);
    assert.equal(auth.state.calls, 3, 'a changed question is asked');
    const metrics = await registry.getSingleMetricAsString('platform_authz_checks_total');
    assert.match(metrics, /verb="list",resource="nodes",decision="allowed",source="cache"\} 3/);
    assert.match(metrics, /verb="list",resource="nodes",decision="allowed",source="apiserver"\} 1/);
  });

  test('denials are cached for a shorter time, so a new binding takes effect soon', async () => {
    const auth = authority();
    const clock = { now: 0 };
    const r = reviewer(auth.review, clock);
    await assert.rejects(r.authorize(alice, listNodes), (err: unknown) => {
      assert.ok(err instanceof HttpError);
      assert.equal(err.statusCode, 403);
      assert.equal(
        err.message,
        'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
      );
      return true;
    });
    auth.state.allowed.add('alice:list');
    clock.now = 1_999;
    assert.equal((await r.check(alice, listNodes)).allowed, false);
    clock.now = 2_000;
    await r.authorize(alice, listNodes);
  });

  test('the question includes user, groups and attributes', async () => {
    const auth = authority();
    auth.state.allowed.add('alice:list');
    const clock = { now: 0 };
    const r = reviewer(auth.review, clock);
    await r.check(alice, listNodes);
    await r.check({ ...alice, groups: ['developers'] }, listNodes);
    await r.check(alice, { ...listNodes, verb: 'get', name: 'n1' });
    await r.check(alice, { ...listNodes, verb: 'get', name: 'n2' });
    assert.equal(auth.state.calls, 4);
    // Group order does not matter.
    await r.check({ ...alice, groups: ['system:authenticated', 'developers'] }, listNodes);
    assert.equal(auth.state.calls, 5, 'evicted by the bound of 3 entries, so asked again');
  });

  test('concurrent identical questions are asked once', async () => {
    const auth = authority();
    auth.state.allowed.add('alice:list');
    auth.hold();
    const r = reviewer(auth.review, { now: 0 });
    const answers = Promise.all(Array.from({ length: 20 }, () => r.check(alice, listNodes)));
    auth.state.release!();
    assert.ok((await answers).every((a) => a.allowed));
    assert.equal(auth.state.calls, 1);
  });

  test('authority unreachable: a recent expired answer is used, else 503', async () => {
    const auth = authority();
    auth.state.allowed.add('alice:list');
    const clock = { now: 0 };
    const registry = new Registry();
    const r = reviewer(auth.review, clock, registry);
    await r.check(alice, listNodes);
    auth.state.down = true;
    clock.now = 30_000;
    assert.deepEqual(await r.check(alice, listNodes), { allowed: true, source: 'stale', ageSeconds: 30 });
    clock.now = 70_001;
    await assert.rejects(r.authorize(alice, listNodes), (err: unknown) => {
      assert.ok(err instanceof HttpError);
      assert.equal(err.statusCode, 503);
      return true;
    });
    await assert.rejects(r.authorize({ username: 'bob', groups: [] }, listNodes), /temporarily unavailable/);
    const metrics = await registry.getSingleMetricAsString('platform_authz_checks_total');
    assert.match(metrics, /decision="allowed",source="stale"\} 1/);
    assert.match(metrics, /decision="error",source="apiserver"\} 2/);
  });

  test('stalled authority: expired answers served at once, one background review per question, its answer stored', async () => {
    const auth = authority();
    auth.state.allowed.add('alice:list');
    const clock = { now: 0 };
    const registry = new Registry();
    const r = reviewer(auth.review, clock, registry);
    await r.check(alice, listNodes);
    assert.deepEqual(r.readiness(), { ok: true });

    auth.hold(); // the kube-apiserver stops answering (SIGSTOP): reviews hang
    clock.now = 12_000;
    // The first request waits at most the revalidation wait (50 ms here), then gets the cached answer.
    const first = await r.check(alice, listNodes);
    assert.deepEqual(first, { allowed: true, source: 'stale', ageSeconds: 12 });
    assert.equal(auth.state.calls, 2);
    // Known unreachable now: later requests do not wait, and do not start a second review.
    const more = await Promise.all(Array.from({ length: 20 }, () => r.check(alice, listNodes)));
    assert.ok(more.every((d) => d.source === 'stale' && d.allowed));
    assert.equal(auth.state.calls, 2, 'one review in flight for the question');

    const report = r.readiness();
    assert.equal(report.ok, true, 'stays ready: every replica shares the kube-apiserver');
    assert.match(
      report.detail ?? '',
      /SubjectAccessReviews failing for 0s; serving cached answers \(oldest served 12s, limit 70s/,
    );
    clock.now = 15_000;
    await r.check(alice, listNodes);
    const metrics = await registry.metrics();
    assert.match(metrics, /platform_authz_unreachable_seconds 3/);
    assert.match(metrics, /platform_authz_stale_answer_age_seconds 15/);

    // The authority answers: the held review's answer is stored and served fresh, the outage is over.
    auth.state.release!();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(await r.check(alice, listNodes), { allowed: true, source: 'cache', ageSeconds: 0 });
    assert.equal(auth.state.calls, 2);
    assert.deepEqual(r.readiness(), { ok: true });
    const after = await registry.metrics();
    assert.match(after, /platform_authz_unreachable_seconds 0/);
    assert.match(after, /platform_authz_stale_answer_age_seconds 0/);
  });

  test('failing authority: each failure counted; past TTL + staleIfError the answer is refused with 503', async () => {
    const auth = authority();
    auth.state.allowed.add('alice:list');
    const clock = { now: 0 };
    const registry = new Registry();
    const r = reviewer(auth.review, clock, registry);
    await r.check(alice, listNodes);
    auth.state.down = true;
    clock.now = 20_000;
    assert.equal((await r.check(alice, listNodes)).source, 'stale');
    assert.equal((await r.check(alice, listNodes)).source, 'stale');
    assert.match(await registry.metrics(), /platform_authz_review_failures_total 2/);
    clock.now = 70_000; // exactly TTL + staleIfError: still served
    assert.equal((await r.authorize(alice, listNodes)).ageSeconds, 70);
    clock.now = 70_001;
    await assert.rejects(r.authorize(alice, listNodes), (err: unknown) => {
      assert.ok(err instanceof HttpError);
      assert.equal(err.statusCode, 503);
      assert.equal(err.retryAfterSeconds, 1);
      return true;
    });
    auth.state.down = false;
    assert.equal((await r.check(alice, listNodes)).source, 'apiserver');
    assert.deepEqual(r.readiness(), { ok: true });
  });

  test('healthy authority: an expired answer is revalidated before it is served', async () => {
    const auth = authority();
    auth.state.allowed.add('alice:list');
    const clock = { now: 0 };
    const r = reviewer(auth.review, clock);
    await r.check(alice, listNodes);
    auth.state.allowed.delete('alice:list'); // the binding is removed
    clock.now = 10_000;
    assert.deepEqual(await r.check(alice, listNodes), { allowed: false, source: 'apiserver', ageSeconds: 0 });
  });

  test('forbidden messages follow the kube-apiserver wording', () => {
    const err = forbidden(
      { username: 'bob', groups: [] },
      { verb: 'get', group: '', resource: 'nodes', name: 'n1' },
    );
    assert.equal(
      err.message,
      'nodes "n1" is forbidden: User "bob" cannot get resource "nodes" in API group "" at the cluster scope',
    );
    assert.deepEqual(err.details, { kind: 'nodes', name: 'n1' });
  });
});

describe('when Kubernetes RBAC changes', () => {
  test('a cached answer is asked again, and a review started before the change stores nothing', async () => {
    const clock = { now: 0 };
    const auth = authority();
    auth.state.allowed.add('alice:list');
    const r = reviewer(auth.review, clock);
    assert.equal((await r.check(alice, listNodes)).allowed, true);
    assert.equal((await r.check(alice, listNodes)).source, 'cache');

    // The binding goes: within the allowed TTL the next check asks again and is refused.
    auth.state.allowed.delete('alice:list');
    r.rbacChanged();
    const after = await r.check(alice, listNodes);
    assert.equal(after.allowed, false);
    assert.equal(after.source, 'apiserver');

    // A review under way when RBAC changes answers its own caller but is not kept for the next: the
    // authority decided before the change (as the kube-apiserver would, from its RBAC at that moment).
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const decidedEarly = reviewer(async (identity, a) => {
      calls++;
      const answer = { allowed: auth.state.allowed.has(`${identity.username}:${a.verb}`) };
      await gate;
      return answer;
    }, clock);
    const early = decidedEarly.check(alice, listNodes);
    decidedEarly.rbacChanged();
    auth.state.allowed.add('alice:list');
    release();
    assert.equal((await early).allowed, false);
    assert.equal((await decidedEarly.check(alice, listNodes)).allowed, true);
    assert.equal(calls, 2);
  });
});
