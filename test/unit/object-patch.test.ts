import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyJsonPatch, applyMergePatch } from '../../src/tenant/object-patch.ts';

const ns = () => ({
  metadata: { name: 'a', labels: { keep: '1', drop: '2' }, finalizers: ['x'] },
  spec: { finalizers: ['kubernetes'] },
});

describe('applyMergePatch (RFC 7386)', () => {
  test('merges objects key by key, null removes, arrays and scalars replace', () => {
    const target = ns();
    const patched = applyMergePatch(target, {
      metadata: { labels: { drop: null, add: '3' }, finalizers: ['y'] },
      spec: null,
    });
    assert.deepEqual(patched, {
      metadata: { name: 'a', labels: { keep: '1', add: '3' }, finalizers: ['y'] },
    });
    assert.deepEqual(target, ns(), 'the target is not changed');
  });

  test('a patch that is not an object replaces the whole document', () => {
    assert.deepEqual(applyMergePatch(ns(), [1]), [1]);
  });
});

describe('applyJsonPatch (RFC 6902)', () => {
  test('add, remove, replace, move, copy and test, in order', () => {
    const patched = applyJsonPatch(ns(), [
      { op: 'test', path: '/metadata/name', value: 'a' },
      { op: 'add', path: '/metadata/labels/new', value: 'n' },
      { op: 'remove', path: '/metadata/labels/drop' },
      { op: 'replace', path: '/metadata/labels/keep', value: 'k' },
      { op: 'add', path: '/metadata/finalizers/-', value: 'z' },
      { op: 'add', path: '/metadata/finalizers/0', value: 'w' },
      { op: 'copy', from: '/metadata/labels/new', path: '/metadata/annotations' },
      { op: 'move', from: '/spec/finalizers', path: '/metadata/moved' },
      { op: 'add', path: '/metadata/labels/a~1b', value: 'slash' },
    ]);
    assert.deepEqual(patched, {
      metadata: {
        name: 'a',
        labels: { keep: 'k', new: 'n', 'a/b': 'slash' },
        finalizers: ['w', 'x', 'z'],
        annotations: 'n',
        moved: ['kubernetes'],
      },
      spec: {},
    });
  });

  test('a failing or malformed operation is a 400 naming it, and the target is not changed', () => {
    const target = ns();
    const cases: [unknown, RegExp][] = [
      [{ op: 'add' }, /a JSON patch is an array of operations/],
      [
        [{ op: 'remove', path: '/metadata/labels/none' }],
        /operation 0 \(remove \/metadata\/labels\/none\): \/metadata\/labels\/none does not exist/,
      ],
      [[{ op: 'test', path: '/metadata/name', value: 'b' }], /operation 0 .*the test failed/],
      [[{ op: 'jump', path: '/x' }], /unknown op "jump"/],
      [[{ op: 'add', path: '/x' }], /needs a "value"/],
      [[{ op: 'move', path: '/x' }], /needs a string "from"/],
      [[{ op: 'add', path: 'metadata', value: 1 }], /is not a JSON pointer/],
      [[{ op: 'add', path: '/metadata/finalizers/5', value: 1 }], /index 5 is out of range/],
      [[{ op: 'add', path: '/metadata/labels/drop/deeper', value: 1 }], /is not an object or array/],
    ];
    for (const [patch, message] of cases) {
      assert.throws(
        () => applyJsonPatch(target, patch),
        (err: { kind?: string; message: string }) => err.kind === 'BadRequest' && message.test(err.message),
        JSON.stringify(patch),
      );
    }
    assert.deepEqual(target, ns());
  });
});
