import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { Informer, type WatchEvent, type WatchFn } from '../../src/cluster/informer.ts';
import { NamespaceIndex } from '../../src/iam/namespace-index.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { waitFor } from '../cluster/wait-for.ts';

interface Binding {
  metadata: { name: string; namespace?: string; resourceVersion: string };
}

const silent = createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) });
const binding = (namespace: string, name: string, rv = '1'): Binding => ({
  metadata: { name, namespace, resourceVersion: rv },
});
const names = (objects: Binding[]) => objects.map((o) => o.metadata.name).sort();

test("a namespace's objects from the first list and the watch, other namespaces' never", async () => {
  let emit: (event: WatchEvent) => void = () => {};
  const watch: WatchFn = async (_query, onEvent) => {
    emit = onEvent;
    return { abort: () => {} };
  };
  const informer = new Informer<Binding>({
    kind: 'rolebindings',
    list: async () => ({
      items: [binding('a', 'x'), binding('a', 'y'), binding('b', 'x')],
      metadata: { resourceVersion: '1' },
    }),
    watch,
    logger: silent,
  });
  const index = new NamespaceIndex(informer);
  informer.start();
  try {
    await waitFor('the first list', () => (informer.synced ? true : undefined));
    assert.deepEqual(names(index.in('a')), ['x', 'y']);
    assert.deepEqual(names(index.in('b')), ['x']);
    assert.deepEqual(index.in('c'), []);

    emit({ type: 'ADDED', object: binding('c', 'z', '2') });
    emit({ type: 'MODIFIED', object: binding('a', 'x', '3') });
    emit({ type: 'DELETED', object: binding('b', 'x', '4') });
    assert.deepEqual(names(index.in('c')), ['z']);
    assert.equal(index.in('a').find((o) => o.metadata.name === 'x')?.metadata.resourceVersion, '3');
    assert.deepEqual(index.in('b'), []);
  } finally {
    await informer.stop();
  }
});
