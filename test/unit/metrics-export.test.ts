import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { MetricsExport } from '../../src/observability/metrics-export.ts';
import { counter, gauge } from '../../src/observability/metrics.ts';

function threadRegistry(count: number, extra?: string) {
  const registry = new Registry();
  counter(registry, { name: 'platform_test_things_total', help: 'Things.', labelNames: ['kind'] }).inc(
    { kind: 'a' },
    count,
  );
  if (extra) gauge(registry, { name: extra, help: 'Only here.' }).set(5);
  return registry;
}

test('without other threads, /metrics is the registry as it is', async () => {
  const registry = threadRegistry(2);
  assert.equal(await new MetricsExport(registry).text(), await registry.metrics());
});

test("another thread's series are merged in: counted on both, exported once as the sum", async () => {
  const main = threadRegistry(2);
  const other = threadRegistry(3, 'platform_test_other_only');
  const metrics = new MetricsExport(main);
  const remove = metrics.add(() => other.getMetricsAsJSON());
  const text = await metrics.text();
  assert.match(text, /^platform_test_things_total\{kind="a"\} 5$/m);
  assert.equal(text.match(/^# TYPE platform_test_things_total /gm)?.length, 1);
  assert.match(text, /^platform_test_other_only 5$/m);
  remove();
  assert.match(await metrics.text(), /^platform_test_things_total\{kind="a"\} 2$/m);
});

test('a thread that fails or does not answer in time leaves only its own series out', async () => {
  const main = threadRegistry(2);
  const metrics = new MetricsExport(main, { sourceTimeoutMs: 50 });
  metrics.add(() => Promise.reject(new Error('thread gone')));
  metrics.add(() => new Promise(() => {}));
  assert.match(await metrics.text(), /^platform_test_things_total\{kind="a"\} 2$/m);
});
