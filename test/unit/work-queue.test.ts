import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { OneReplicaRunner, type Reconciler } from '../../src/reconcile/one-replica.ts';
import { createReconcileMetrics } from '../../src/reconcile/reconcile-metrics.ts';
import { WorkQueue } from '../../src/reconcile/work-queue.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { waitFor } from '../cluster/wait-for.ts';

const silent = createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) });

/** A promise the test resolves by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('work queue', () => {
  test('a key added many times before it runs is handled once', async () => {
    const handled: string[] = [];
    const queue = new WorkQueue({
      name: 't',
      concurrency: 2,
      logger: silent,
      handle: async (key) => void handled.push(key),
    });
    for (const key of ['a', 'b', 'a', 'a', 'b']) queue.add(key);
    assert.deepEqual(handled, [], 'nothing runs before start');
    queue.start();
    await waitFor('both keys', () => (handled.length === 2 ? true : undefined));
    await queue.stop();
    assert.deepEqual(handled.sort(), ['a', 'b']);
  });

  test('a key that changes while it is handled is handled again after, never twice at once', async () => {
    let running = 0;
    let most = 0;
    let calls = 0;
    const first = gate();
    const queue = new WorkQueue({
      name: 't',
      concurrency: 4,
      logger: silent,
      handle: async () => {
        running++;
        most = Math.max(most, running);
        calls++;
        if (calls === 1) await first.opened;
        running--;
      },
    });
    queue.start();
    queue.add('k');
    await waitFor('first run', () => (calls === 1 ? true : undefined));
    queue.add('k');
    queue.add('k');
    first.open();
    await waitFor('second run', () => (calls === 2 ? true : undefined));
    await queue.stop();
    assert.equal(calls, 2);
    assert.equal(most, 1);
  });

  test('a failing key is retried with growing delays until it succeeds; metrics count both', async () => {
    const registry = new Registry();
    const metrics = createReconcileMetrics(registry, () => true);
    const at: number[] = [];
    const queue = new WorkQueue({
      name: 'flaky',
      concurrency: 1,
      logger: silent,
      metrics,
      initialBackoffMs: 40,
      maxBackoffMs: 1000,
      handle: async () => {
        at.push(performance.now());
        if (at.length < 4) throw new Error('conflict');
      },
    });
    queue.start();
    queue.add('k');
    await waitFor('success on the fourth try', () => (at.length === 4 ? true : undefined), {
      timeoutMs: 3000,
    });
    await queue.stop();
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // Jitter takes up to half off: 20-40, 40-80, 80-160 ms.
    assert.ok(gaps[0]! >= 19 && gaps[2]! >= 79, `gaps ${gaps.map(Math.round).join(', ')}`);
    const text = await registry.metrics();
    assert.match(text, /platform_reconcile_total\{reconciler="flaky",result="error"\} 3/);
    assert.match(text, /platform_reconcile_total\{reconciler="flaky",result="success"\} 1/);
    assert.match(text, /platform_leader_is_leader 1/);
  });

  test('stop waits for the key being handled and drops the waiting ones and retries', async () => {
    const slow = gate();
    const handled: string[] = [];
    const queue = new WorkQueue({
      name: 't',
      concurrency: 1,
      logger: silent,
      handle: async (key) => {
        if (key === 'slow') await slow.opened;
        handled.push(key);
      },
    });
    queue.start();
    queue.add('slow');
    queue.add('next');
    await waitFor('slow to start', () => (queue.depth === 1 ? true : undefined));
    let stopped = false;
    const stopping = queue.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(stopped, false, 'waits for the key in progress');
    slow.open();
    await stopping;
    assert.deepEqual(handled, ['slow']);
    queue.add('late');
    assert.equal(queue.depth, 0);
  });
});

describe('one-replica runner', () => {
  test('runs reconcilers only while leading, in order of the transitions', async () => {
    const log: string[] = [];
    const reconciler = (name: string): Reconciler => ({
      name,
      start: () => void log.push(`${name} start`),
      stop: async () => void log.push(`${name} stop`),
    });
    const runner = new OneReplicaRunner({ logger: silent });
    const removeA = runner.add(reconciler('a'));
    await runner.startedLeading();
    runner.add(reconciler('b'));
    await runner.stoppedLeading('lost');
    await runner.startedLeading();
    await removeA();
    await runner.stoppedLeading('released');
    assert.deepEqual(log, [
      'a start',
      'b start',
      'a stop',
      'b stop',
      'a start',
      'b start',
      'a stop',
      'b stop',
    ]);
  });

  test('a reconciler that fails to start does not keep the others from running', async () => {
    const log: string[] = [];
    const runner = new OneReplicaRunner({ logger: silent });
    runner.add({
      name: 'broken',
      start: () => {
        throw new Error('no');
      },
      stop: async () => void log.push('broken stop'),
    });
    runner.add({
      name: 'ok',
      start: () => void log.push('ok start'),
      stop: async () => void log.push('ok stop'),
    });
    await runner.startedLeading();
    await runner.stoppedLeading('released');
    assert.deepEqual(log, ['ok start', 'ok stop']);
  });
});
