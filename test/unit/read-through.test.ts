import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ReadThroughCache, type WatchedCache } from '../../src/cluster/read-through.ts';

type Obj = KubernetesObject & { metadata: { name: string; resourceVersion?: string } };

/** A stand-in for an informer: a map plus listeners (pure logic; the real informer is tested against a cluster). */
class FakeCache implements WatchedCache<Obj> {
  readonly objects = new Map<string, Obj>();
  readonly listeners = new Set<(type: string, o: Obj) => void>();
  get(name: string) {
    return this.objects.get(name);
  }
  onEvent(listener: (type: string, o: Obj) => void) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(type: 'ADDED' | 'MODIFIED' | 'DELETED', o: Obj) {
    if (type === 'DELETED') this.objects.delete(o.metadata.name);
    else this.objects.set(o.metadata.name, o);
    for (const l of this.listeners) l(type, o);
  }
}

const obj = (name: string, rv = '1'): Obj => ({ metadata: { name, resourceVersion: rv } });

function setup(server: Map<string, Obj>) {
  let now = 0;
  const cache = new FakeCache();
  let fetches = 0;
  const rt = new ReadThroughCache<Obj>({
    cache,
    fetch: async (name) => {
      fetches++;
      return server.get(name);
    },
    positiveTtlMs: 2000,
    negativeTtlMs: 5000,
    maxEntries: 2,
    nowMs: () => now,
  });
  return {
    cache,
    rt,
    fetches: () => fetches,
    advance: (ms: number) => (now += ms),
  };
}

describe('ReadThroughCache', () => {
  test('a miss reads through once; the answer is kept until its TTL', async () => {
    const server = new Map([['s1', obj('s1')]]);
    const { rt, fetches, advance } = setup(server);
    assert.equal(rt.peek('s1'), undefined);
    const [x, y] = await Promise.all([rt.get('s1'), rt.get('s1')]);
    assert.equal(x, y);
    assert.equal(fetches(), 1, 'concurrent misses share one request');
    assert.equal(rt.peek('s1')?.metadata.name, 's1');
    advance(2001);
    assert.equal(rt.peek('s1'), undefined);
    await rt.get('s1');
    assert.equal(fetches(), 2);
  });

  test('"gone" (fetched or our own delete) wins over a cache that has not seen the deletion yet', async () => {
    const server = new Map<string, Obj>();
    const { cache, rt } = setup(server);
    cache.emit('ADDED', obj('s1'));
    assert.equal(rt.peek('s1')?.metadata.name, 's1');
    rt.forget('s1');
    assert.equal(rt.peek('s1'), undefined);
    // A stale MODIFIED still in flight does not resurrect it; the DELETED event then settles it.
    cache.emit('MODIFIED', obj('s1', '2'));
    assert.equal(await rt.get('s1'), undefined);
    cache.emit('DELETED', obj('s1', '3'));
    assert.equal(rt.peek('s1'), undefined);
  });

  test('an informer event makes the informer authoritative again for a name', async () => {
    const server = new Map([['u1', obj('u1', '5')]]);
    const { cache, rt } = setup(server);
    await rt.get('u1');
    cache.emit('ADDED', obj('u1', '6'));
    assert.equal(rt.peek('u1')?.metadata.resourceVersion, '6');
    cache.emit('DELETED', obj('u1', '7'));
    assert.equal(rt.peek('u1'), undefined);
  });

  test('a write answered after the watch reported the deletion does not resurrect the object', () => {
    const { cache, rt, advance } = setup(new Map());
    cache.emit('ADDED', obj('u1', '1'));
    cache.emit('DELETED', obj('u1', '2'));
    rt.remember(obj('u1', '1'));
    assert.equal(rt.peek('u1'), undefined);
    advance(5001);
    rt.remember(obj('u1', '9'));
    assert.equal(
      rt.peek('u1')?.metadata.resourceVersion,
      '9',
      'after the TTL a new object of the name is accepted',
    );
  });

  test('remember() serves what this replica wrote; entries are bounded', async () => {
    const { rt } = setup(new Map());
    rt.remember(obj('a'));
    rt.remember(obj('b'));
    rt.remember(obj('c'));
    assert.equal(rt.peek('a'), undefined, 'oldest evicted');
    assert.equal(rt.peek('c')?.metadata.name, 'c');
  });

  test('a read that found nothing does not hide an object this replica created after it', async () => {
    const server = new Map<string, Obj>();
    const { rt, advance } = setup(server);
    // The console asks whether a name is free, then creates it: the "missing" answer is older than the create.
    assert.equal(await rt.get('u2'), undefined);
    const created: Obj = { metadata: { name: 'u2', resourceVersion: '3', uid: 'uid-new' } } as Obj;
    rt.remember(created);
    advance(10);
    assert.equal(rt.peek('u2'), created);
    assert.equal(await rt.get('u2'), created);
  });

  test('after this replica deleted an object, only a new object of the name (another uid) is remembered', () => {
    const { rt } = setup(new Map());
    const old = { metadata: { name: 'u3', resourceVersion: '4', uid: 'uid-old' } } as Obj;
    rt.remember(old);
    rt.forget('u3', 'uid-old');
    rt.remember({ ...old, metadata: { ...old.metadata, resourceVersion: '5' } });
    assert.equal(rt.peek('u3'), undefined, "the deleted object's late answer stays gone");
    const again = { metadata: { name: 'u3', resourceVersion: '6', uid: 'uid-again' } } as Obj;
    rt.remember(again);
    assert.equal(rt.peek('u3'), again);
  });

  test('entries that expired are dropped when the next is stored, not held until maxEntries', () => {
    const { cache, rt, advance } = setup(new Map());
    // A session deleted at its user's limit is remembered as gone, and is usually never asked about again.
    cache.emit('DELETED', obj('gone-1'));
    assert.equal(rt.size, 1);
    advance(5001);
    cache.emit('DELETED', obj('gone-2'));
    assert.equal(rt.size, 1, 'the expired entry went when the next was stored');
    assert.equal(rt.peek('gone-2'), undefined);
    advance(1000);
    rt.remember(obj('fresh'));
    assert.equal(rt.size, 2, 'entries still within their TTL stay');
  });
});
