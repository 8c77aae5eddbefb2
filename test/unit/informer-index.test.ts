import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { Informer, type WatchEvent, type WatchFn } from '../../src/cluster/informer.ts';
import { InformerIndex } from '../../src/cluster/informer-index.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { waitFor } from '../cluster/wait-for.ts';

interface Owned {
  metadata: { name: string; resourceVersion: string };
  spec: { owner?: string };
}

const silent = createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) });
const owned = (name: string, rv: string, owner?: string): Owned => ({
  metadata: { name, resourceVersion: rv },
  spec: owner === undefined ? {} : { owner },
});
const names = (objects: Owned[]) => objects.map((o) => o.metadata.name).sort();

test('an informer index groups the cache by a value, through watch events and relists', async () => {
  let items = [
    owned('a1', '1', 'alice'),
    owned('a2', '2', 'alice'),
    owned('b1', '3', 'bob'),
    owned('x', '4'),
  ];
  let emit: ((event: WatchEvent) => void) | undefined;
  let watches = 0;
  const watch: WatchFn = async (_query, onEvent, onDone) => {
    watches++;
    emit = onEvent;
    return { abort: () => onDone(null) };
  };
  const informer = new Informer<Owned>({
    kind: 'owned',
    list: async () => ({ items, metadata: { resourceVersion: '10' } }),
    watch,
    logger: silent,
    initialBackoffMs: 1,
    maxBackoffMs: 5,
  });
  const byOwner = new InformerIndex(
    informer,
    (o) => o.spec.owner,
    (o) => o.metadata.name,
  );
  informer.start();
  await informer.waitForSynced(1000);
  await waitFor('watch opened', () => (watches === 1 ? true : undefined));
  assert.deepEqual(names(byOwner.get('alice')), ['a1', 'a2']);
  assert.deepEqual(names(byOwner.get('bob')), ['b1']);
  assert.deepEqual(byOwner.get('nobody'), []);

  emit!({ type: 'ADDED', object: owned('a3', '11', 'alice') });
  // Changing the value moves the object to its new group.
  emit!({ type: 'MODIFIED', object: owned('a1', '12', 'bob') });
  emit!({ type: 'DELETED', object: owned('a2', '13', 'alice') });
  emit!({ type: 'MODIFIED', object: owned('x', '14', 'carol') });
  assert.deepEqual(names(byOwner.get('alice')), ['a3']);
  assert.deepEqual(names(byOwner.get('bob')), ['a1', 'b1']);
  assert.deepEqual(names(byOwner.get('carol')), ['x']);

  // A relist (the watch's resourceVersion expired) reports what changed meanwhile: the index follows.
  items = [owned('a3', '11', 'alice'), owned('b2', '20', 'bob'), owned('x', '21', 'alice')];
  emit!({ type: 'ERROR', object: { code: 410, message: 'too old' } });
  await waitFor('relisted', () => (watches === 2 ? true : undefined));
  assert.deepEqual(names(byOwner.get('alice')), ['a3', 'x']);
  assert.deepEqual(names(byOwner.get('bob')), ['b2']);
  assert.deepEqual(byOwner.get('carol'), []);

  // Closed, it stops following the informer.
  byOwner.close();
  emit!({ type: 'ADDED', object: owned('a4', '22', 'alice') });
  assert.deepEqual(byOwner.get('alice'), []);
  await informer.stop();
});
