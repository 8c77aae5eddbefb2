import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergePatch } from '../../src/iam/role-writes.ts';

test('a merge patch merges objects key by key, null removes, lists and scalars replace (RFC 7386)', () => {
  const stored = {
    metadata: { name: 'r', labels: { a: '1', b: '2' }, annotations: { x: 'y' } },
    rules: [{ verbs: ['get'] }],
  };
  const patched = mergePatch(stored, {
    metadata: { labels: { a: null, c: '3' }, annotations: null },
    rules: [{ verbs: ['list'] }],
  });
  assert.deepEqual(patched, {
    metadata: { name: 'r', labels: { b: '2', c: '3' } },
    rules: [{ verbs: ['list'] }],
  });
  assert.deepEqual(stored.metadata.labels, { a: '1', b: '2' }, 'the stored object is left as it was');
  assert.deepEqual(mergePatch(stored, ['whole']), ['whole']);
  assert.deepEqual(mergePatch('scalar', { a: { b: 1 } }), { a: { b: 1 } });
});
