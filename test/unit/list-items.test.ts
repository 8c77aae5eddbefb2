import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eachListItem } from '../../src/cluster/list-items.ts';

function items(text: string) {
  const seen: unknown[] = [];
  const metadata = eachListItem(Buffer.from(text), (item) => seen.push(item));
  return { seen, metadata };
}

describe('eachListItem', () => {
  test('hands over every item, parsed, and returns the list metadata', () => {
    const list = {
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '4711', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ' },
      items: [
        { metadata: { name: 'a', annotations: { tricky: '},{"metadata":{"name":"x"}}]' } } },
        {
          metadata: { name: 'b', labels: { 'q"uote': 'back\\slash\\', brace: '{[' } },
          spec: { list: [1, [2]] },
        },
        { metadata: { name: 'c' }, status: { message: 'ends with an escaped quote \\"' } },
      ],
    };
    const { seen, metadata } = items(JSON.stringify(list));
    assert.deepEqual(seen, list.items);
    assert.deepEqual(metadata, { resourceVersion: '4711', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ' });
  });

  test('the same with whitespace (an indented answer) and with the items before the metadata', () => {
    const list = {
      items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }],
      metadata: { resourceVersion: '9' },
    };
    for (const text of [JSON.stringify(list, null, 2), JSON.stringify(list)]) {
      const { seen, metadata } = items(text);
      assert.deepEqual(seen, list.items);
      assert.deepEqual(metadata, { resourceVersion: '9' });
    }
  });

  test('an empty list, and a list with items null', () => {
    assert.deepEqual(items('{"metadata":{"resourceVersion":"1"},"items":[]}'), {
      seen: [],
      metadata: { resourceVersion: '1' },
    });
    assert.deepEqual(items('{"metadata":{"resourceVersion":"2"},"items":null}'), {
      seen: [],
      metadata: { resourceVersion: '2' },
    });
  });

  test('a nested array called items is part of its item, not the list', () => {
    const list = { metadata: {}, items: [{ spec: { items: [{ key: 'k' }] } }] };
    assert.deepEqual(items(JSON.stringify(list)).seen, list.items);
  });

  test('malformed answers throw', () => {
    for (const text of [
      '{"metadata":{},"items":[{"a":1}',
      '{"metadata":{},"items":[{"a":"unterminated}]}',
      '{"metadata":{},"items":[{"a":1}]}}',
      '{"metadata":{},"items":[{"a":nope}]}',
      '{"metadata":{},"items":{"a":1}}',
      'not json',
    ]) {
      assert.throws(() => items(text), SyntaxError, text);
    }
  });
});
