import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { BodyMemo, EtagMemo, etagFor, matchesIfNoneMatch } from '../../src/nodes/prepared-response.ts';

describe('ETags', () => {
  test('derived from the state and the query', () => {
    const a = etagFor('100', '[1]');
    assert.match(a, /^W\/"100\.[\w-]{16}"$/);
    assert.equal(etagFor('100', '[1]'), a);
    assert.notEqual(etagFor('101', '[1]'), a);
    assert.notEqual(etagFor('100', '[2]'), a);
  });

  test('If-None-Match: weak comparison, lists, and *', () => {
    const etag = 'W/"100.abc"';
    assert.equal(matchesIfNoneMatch(undefined, etag), false);
    assert.equal(matchesIfNoneMatch('W/"100.abc"', etag), true);
    assert.equal(matchesIfNoneMatch('"100.abc"', etag), true);
    assert.equal(matchesIfNoneMatch('"x", W/"100.abc"', etag), true);
    assert.equal(matchesIfNoneMatch('*', etag), true);
    assert.equal(matchesIfNoneMatch('W/"100.abd"', etag), false);
  });
});

describe('body memo', () => {
  test('builds once per state and query, forgets everything when the state changes', () => {
    const memo = new BodyMemo({ maxBytes: 1000 });
    let builds = 0;
    const build = () => {
      builds++;
      return Buffer.from(`body ${builds}`);
    };
    const first = memo.get('s1', 'q', 'e', build);
    assert.equal(memo.get('s1', 'q', 'e', build), first);
    assert.equal(builds, 1);
    memo.get('s1', 'other', 'e2', build);
    assert.equal(builds, 2);
    const afterChange = memo.get('s2', 'q', 'e3', build);
    assert.notEqual(afterChange, first);
    assert.equal(afterChange.etag, 'e3');
    assert.equal(builds, 3);
  });

  test('bounded by bytes: oldest bodies go first, oversized ones are not kept', () => {
    const memo = new BodyMemo({ maxBytes: 10 });
    let builds = 0;
    const sized = (n: number) => () => {
      builds++;
      return Buffer.alloc(n);
    };
    memo.get('s', 'a', 'e', sized(4));
    memo.get('s', 'b', 'e', sized(4));
    memo.get('s', 'c', 'e', sized(4)); // evicts a
    assert.equal(builds, 3);
    memo.get('s', 'c', 'e', sized(4));
    memo.get('s', 'b', 'e', sized(4));
    assert.equal(builds, 3);
    memo.get('s', 'a', 'e', sized(4));
    assert.equal(builds, 4);
    memo.get('s', 'big', 'e', sized(11));
    memo.get('s', 'big', 'e', sized(11));
    assert.equal(builds, 6);
  });

  test('gzip is computed once and round-trips', async () => {
    const memo = new BodyMemo({ maxBytes: 1 << 20 });
    const text = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ name: `node-${i}` })) });
    const prepared = memo.get('s', 'q', 'e', () => Buffer.from(text));
    const [a, b] = await Promise.all([prepared.gzipped(), prepared.gzipped()]);
    assert.equal(a, b);
    assert.ok(a.length < text.length / 3);
    assert.equal(gunzipSync(a).toString(), text);
  });
});

describe('ETag memo', () => {
  test('one hash per query and state: the same tag again, a new one when the state changes', () => {
    const memo = new EtagMemo({ maxEntries: 2 });
    const first = memo.get('10', 'limit=10');
    assert.equal(first, etagFor('10', 'limit=10'));
    assert.equal(memo.get('10', 'limit=10'), first);
    assert.notEqual(memo.get('11', 'limit=10'), first);
    assert.equal(memo.get('11', 'limit=10'), etagFor('11', 'limit=10'));
    // Bounded: older queries make room, and still get the right tag when asked again.
    memo.get('11', 'a');
    memo.get('11', 'b');
    assert.equal(memo.get('11', 'limit=10'), etagFor('11', 'limit=10'));
  });
});
