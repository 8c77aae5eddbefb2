import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseListQuery } from '../../src/list-query/list-query.ts';
import { sortAndPage, type ListedObject } from '../../src/list-query/metadata-page.ts';

/** A deterministic generator, so a failure names a reproducible case. */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state;
  };
}

test('a small page of a long list is the page of the whole sorted list, in every order', () => {
  const next = numbers(7);
  // Few distinct times, so ties by name decide often.
  const objects: ListedObject[] = Array.from({ length: 2000 }, (_, i) => ({
    metadata: {
      name: `user-${(next() % 100000).toString(36)}-${i}`,
      creationTimestamp: new Date(Date.UTC(2026, 0, 1) + (next() % 50) * 1000).toISOString(),
    },
  }));
  const fullSort = (query: Record<string, string>): string[] => {
    const { limit: _limit, page: _page, ...unpaged } = query;
    const all = sortAndPage(objects, parseListQuery(unpaged)).items.map((o) => o.metadata.name);
    const limit = Number(query.limit);
    const page = Number(query.page ?? '1');
    return all.slice((page - 1) * limit, page * limit);
  };
  for (const sortBy of ['createTime', 'name']) {
    for (const ascending of [undefined, 'true']) {
      for (const [limit, page] of [
        ['10', '1'],
        ['10', '7'],
        ['1', '1'],
        ['25', '3'],
        ['500', '2'],
        ['10', '201'],
      ] as const) {
        const query: Record<string, string> = { sortBy, limit, page, ...(ascending ? { ascending } : {}) };
        const got = sortAndPage(objects, parseListQuery(query));
        assert.deepEqual(
          got.items.map((o) => o.metadata.name),
          fullSort(query),
          JSON.stringify(query),
        );
        assert.equal(got.totalItems, 2000);
      }
    }
  }
});
