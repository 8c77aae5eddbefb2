import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseListQuery } from '../../src/list-query/list-query.ts';
import { sortAndPage, type ListedObject } from '../../src/list-query/metadata-page.ts';
import { ObjectJson, pageBody, PageMemo } from '../../src/list-query/page-body.ts';
import { pageInOrder, SortedIndex } from '../../src/list-query/sorted-index.ts';

// Creation times repeat, so ties by name decide part of the order.
const objects: ListedObject[] = Array.from({ length: 40 }, (_, i) => ({
  metadata: {
    name: `obj-${(i * 7) % 40}`,
    creationTimestamp: `2024-01-0${1 + (i % 5)}T00:00:00Z`,
    labels: { tier: i % 3 === 0 ? 'gold' : 'silver' },
  },
}));
const names = (items: readonly ListedObject[]) => items.map((o) => o.metadata.name);

test('a page cut from the sorted index is the page sortAndPage gives, for every order, page and filter', () => {
  const index = new SortedIndex<ListedObject>();
  const queries = [
    {},
    { limit: '10' },
    { limit: '10', page: '3' },
    { limit: '10', ascending: 'true' },
    { sortBy: 'name', limit: '7', page: '2' },
    { sortBy: 'name', ascending: 'true' },
    { sortBy: 'createTime', limit: '5', labelSelector: 'tier=gold' },
    { limit: '10', page: '9' },
  ];
  for (const raw of queries) {
    const query = parseListQuery(raw);
    const gold = (o: ListedObject) => query.labelSelector.matches(o.metadata.labels);
    const expected = sortAndPage(objects.filter(gold), query);
    const got = pageInOrder(
      index.descending('v1', query.sortBy, () => objects),
      query,
      gold,
    );
    assert.deepEqual(names(got.items), names(expected.items), JSON.stringify(raw));
    assert.equal(got.totalItems, expected.totalItems, JSON.stringify(raw));
  }
});

test('the sorted index sorts again when the state changes, and only then', () => {
  const index = new SortedIndex<ListedObject>();
  let reads = 0;
  const read = (list: ListedObject[]) => () => (reads++, list);
  assert.equal(index.descending('v1', 'name', read(objects)).length, 40);
  assert.equal(index.descending('v1', 'name', read([])).length, 40);
  assert.equal(reads, 1);
  assert.equal(index.descending('v2', 'name', read(objects.slice(0, 3))).length, 3);
  assert.equal(reads, 2);
});

test('a page body is the bytes JSON.stringify writes for the envelope', () => {
  const items = [{ a: 1, b: 'x"y' }, { c: [1, 2] }];
  const json = new ObjectJson<object>();
  const body = pageBody(
    items.map((o) => json.text(o, '', () => o)),
    12,
  );
  assert.equal(body.toString(), JSON.stringify({ items, totalItems: 12 }));
  assert.equal(pageBody([], 0).toString(), JSON.stringify({ items: [], totalItems: 0 }));
});

test('an object’s JSON is made again for another variant, and kept for the same', () => {
  const json = new ObjectJson<object>();
  const user = { name: 'u' };
  let views = 0;
  const view = (role: string) => () => (views++, { ...user, role });
  assert.equal(json.text(user, 'admin', view('admin')), '{"name":"u","role":"admin"}');
  assert.equal(json.text(user, 'admin', view('other')), '{"name":"u","role":"admin"}');
  assert.equal(json.text(user, 'viewer', view('viewer')), '{"name":"u","role":"viewer"}');
  assert.equal(views, 2);
});

test('remembered pages answer only for the state they were built in, within their byte bound', () => {
  const memo = new PageMemo({ maxBytes: 10 });
  memo.set('s1', 'q', Buffer.from('12345'));
  assert.equal(memo.get('s1', 'q')?.toString(), '12345');
  assert.equal(memo.get('s2', 'q'), undefined);
  memo.set('s1', 'r', Buffer.from('678901'));
  // Over the bound: the oldest goes.
  assert.equal(memo.get('s1', 'q'), undefined);
  assert.equal(memo.get('s1', 'r')?.toString(), '678901');
  memo.set('s2', 'q', Buffer.from('a'));
  assert.equal(memo.get('s1', 'r'), undefined);
  memo.set('s2', 'big', Buffer.from('much too large'));
  assert.equal(memo.get('s2', 'big'), undefined);
});
