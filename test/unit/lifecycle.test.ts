import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/kernel/api-error.ts';
import { dependencyOrder, Lifecycle } from '../../src/kernel/lifecycle.ts';
import { serviceRef, type Module } from '../../src/kernel/module.ts';

const numberRef = serviceRef<number>('number');
const textRef = serviceRef<string>('text');
const silent = { warn: () => {} };

describe('kernel lifecycle', () => {
  test('modules register after the providers of what they require, otherwise in list order', () => {
    const consumer: Module<string> = { name: 'consumer', requires: [textRef], register: () => ({}) };
    const provider: Module<string> = { name: 'provider', provides: [textRef], register: () => ({}) };
    const loner: Module<string> = { name: 'loner', register: () => ({}) };
    const order = dependencyOrder([loner, consumer, provider], new Set());
    assert.deepEqual(
      order.map((m) => m.name),
      ['loner', 'provider', 'consumer'],
    );
  });

  test('a requirement nobody provides and a cycle are refused', () => {
    const a: Module<string> = { name: 'a', requires: [textRef], provides: [numberRef], register: () => ({}) };
    assert.throws(() => dependencyOrder([a], new Set()), /requires text, which nothing provides/);
    const b: Module<string> = { name: 'b', requires: [numberRef], provides: [textRef], register: () => ({}) };
    assert.throws(() => dependencyOrder([a, b], new Set()), /cycle/);
  });

  test('services flow between modules; start in order, stop in reverse, readiness from all checks', async () => {
    const events: string[] = [];
    let ready = false;
    const lifecycle = new Lifecycle<string>(silent).provide(numberRef, 2);
    const edges = await lifecycle.register([
      {
        name: 'reader',
        requires: [textRef],
        register: (ctx) => ({
          edge: `reader saw ${ctx.get(textRef)}`,
          start: () => void events.push('start reader'),
          stop: () => void events.push('stop reader'),
        }),
      },
      {
        name: 'writer',
        requires: [numberRef],
        provides: [textRef],
        register: (ctx) => {
          ctx.provide(textRef, 'x'.repeat(ctx.get(numberRef)));
          return {
            readiness: { 'writer-ready': () => ready },
            start: () => void events.push('start writer'),
            stop: () => {
              events.push('stop writer');
              throw new Error('one failing stop does not keep the others running');
            },
          };
        },
      },
    ]);
    assert.deepEqual(edges, ['reader saw xx']);
    assert.equal(lifecycle.readiness.report().ready, false);
    ready = true;
    assert.equal(lifecycle.readiness.report().ready, true);
    await lifecycle.start();
    await lifecycle.stop();
    assert.deepEqual(events, ['start writer', 'start reader', 'stop reader', 'stop writer']);
  });

  test('a module gets only what it declared', async () => {
    const lifecycle = new Lifecycle<string>(silent).provide(numberRef, 1);
    await assert.rejects(
      lifecycle.register([{ name: 'sneaky', register: (ctx) => ({ edge: String(ctx.get(numberRef)) }) }]),
      /sneaky asked for number, which it does not require/,
    );
  });
});

describe('ApiError', () => {
  test('a kind carries its status code; details stay as given', () => {
    const err = new ApiError('Unavailable', 'not yet', { retryAfterSeconds: 1, details: { kind: 'nodes' } });
    assert.equal(err.statusCode, 503);
    assert.equal(err.retryAfterSeconds, 1);
    assert.deepEqual(err.details, { kind: 'nodes' });
    assert.equal(new ApiError('TooManyRequests', 'slow down').statusCode, 429);
  });
});
