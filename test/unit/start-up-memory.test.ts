import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { releaseStartUpMemory } from '../../src/kernel/start-up-memory.ts';

const silent = { info: () => {} };

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test('the collection runs once, after readiness holds, and says what it released', async () => {
  let ready = false;
  let collections = 0;
  const logged: { message: string; fields: Record<string, unknown> }[] = [];
  let rss = 500 * 2 ** 20;
  releaseStartUpMemory({
    isReady: () => ready,
    collect: () => {
      collections++;
      rss = 200 * 2 ** 20;
    },
    logger: {
      info: (message, fields) => logged.push({ message, fields: fields as Record<string, unknown> }),
    },
    pollMs: 2,
    rssBytes: () => rss,
  });
  // Several polls pass while not ready.
  const deadline = Date.now() + 30;
  await until(() => Date.now() > deadline, 'a few polls');
  assert.equal(collections, 0);
  ready = true;
  await until(() => collections > 0, 'the collection');
  const after = Date.now() + 30;
  await until(() => Date.now() > after, 'more polls');
  assert.equal(collections, 1);
  assert.equal(logged.length, 1);
  assert.equal(logged[0]!.message, 'start-up memory released');
  assert.equal(logged[0]!.fields['rssBeforeMb'], 500);
  assert.equal(logged[0]!.fields['rssAfterMb'], 200);
});

test('cancelled before its first poll: never collects; no collector: nothing to wait for', async () => {
  let collections = 0;
  const cancel = releaseStartUpMemory({
    isReady: () => true,
    collect: () => collections++,
    logger: silent,
    pollMs: 2,
  });
  cancel();
  const deadline = Date.now() + 30;
  await until(() => Date.now() > deadline, 'a few poll periods');
  assert.equal(collections, 0);
  assert.doesNotThrow(() =>
    releaseStartUpMemory({ isReady: () => true, collect: undefined, logger: silent })(),
  );
});

// In a child, so that this process's heap is not what is measured.
test('the collector gives a burst of garbage back to the system; the main global gets no gc', () => {
  const module = fileURLToPath(new URL('../../src/kernel/start-up-memory.ts', import.meta.url));
  const script = `
    const { memoryReleasingCollection } = await import(${JSON.stringify(module)});
    const collect = memoryReleasingCollection();
    let burst = [];
    for (let i = 0; i < 3e6; i++) burst.push({ i, s: 'item-' + i });
    const peak = process.memoryUsage.rss();
    burst = undefined;
    collect();
    console.log(JSON.stringify({ peak, after: process.memoryUsage.rss(), globalGc: typeof globalThis.gc }));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const out = JSON.parse(child.stdout) as { peak: number; after: number; globalGc: string };
  assert.equal(out.globalGc, 'undefined');
  // ~300 MB of short-lived objects: a regular full collection keeps most of it pooled.
  assert.ok(out.after < out.peak / 2, JSON.stringify(out));
});

test('what waits for the release starts after the collection, and at readiness when there is none', async () => {
  const order: string[] = [];
  let ready = false;
  releaseStartUpMemory({
    isReady: () => ready,
    collect: () => order.push('collect'),
    logger: silent,
    onReleased: () => order.push('released'),
    pollMs: 2,
  });
  let readyWithout = false;
  let releasedWithout = false;
  releaseStartUpMemory({
    isReady: () => readyWithout,
    collect: undefined,
    logger: silent,
    onReleased: () => (releasedWithout = true),
    pollMs: 2,
  });
  const deadline = Date.now() + 30;
  await until(() => Date.now() > deadline, 'a few polls');
  assert.deepEqual(order, []);
  assert.equal(releasedWithout, false);
  ready = true;
  readyWithout = true;
  await until(() => order.length === 2 && releasedWithout, 'both releases');
  assert.deepEqual(order, ['collect', 'released']);
});
