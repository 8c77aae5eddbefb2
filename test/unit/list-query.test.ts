import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError as HttpError } from '../../src/kernel/api-error.ts';
import { ListQueryParser, parseListQuery } from '../../src/list-query/list-query.ts';
import { NODE_STATUSES } from '../../src/nodes/node-status.ts';

const parse = (query: Record<string, unknown>) => parseListQuery(query, { statuses: NODE_STATUSES });

function rejects(query: Record<string, unknown>, parameter: string, message: RegExp) {
  assert.throws(
    () => parse(query),
    (err: unknown) => {
      assert.ok(err instanceof HttpError, String(err));
      assert.equal(err.statusCode, 400);
      assert.match(err.message, new RegExp(`"${parameter}"`));
      assert.match(err.message, message);
      assert.equal(err.details?.causes?.[0]?.field, parameter);
      return true;
    },
  );
}

describe('list query', () => {
  test('defaults: first page of everything, newest first', () => {
    const q = parse({});
    assert.equal(q.page, 1);
    assert.equal(q.limit, undefined);
    assert.equal(q.sortBy, 'creationTimestamp');
    assert.equal(q.ascending, false);
    assert.equal(q.name, undefined);
    assert.equal(q.labelSelector.empty, true);
    assert.equal(q.status, undefined);
  });

  test('every parameter', () => {
    const q = parse({
      page: '3',
      limit: '10',
      sortBy: 'name',
      ascending: 'true',
      name: 'work',
      labelSelector: 'zone in (a,b)',
      status: 'warning',
    });
    assert.equal(q.page, 3);
    assert.equal(q.limit, 10);
    assert.equal(q.sortBy, 'name');
    assert.equal(q.ascending, true);
    assert.equal(q.name, 'work');
    assert.equal(q.labelSelector.requirements.length, 1);
    assert.equal(q.status, 'warning');
  });

  test('createTime is creationTimestamp; limit=-1 means all; ParseBool spellings', () => {
    assert.equal(parse({ sortBy: 'createTime' }).sortBy, 'creationTimestamp');
    assert.equal(parse({ limit: '-1' }).limit, undefined);
    for (const t of ['1', 't', 'T', 'TRUE', 'True']) assert.equal(parse({ ascending: t }).ascending, true);
    for (const f of ['0', 'f', 'F', 'FALSE', 'False', 'false'])
      assert.equal(parse({ ascending: f }).ascending, false);
  });

  test('empty name and empty selector filter nothing', () => {
    assert.equal(parse({ name: '' }).name, undefined);
    assert.equal(parse({ labelSelector: '' }).labelSelector.empty, true);
  });

  test('unknown parameters are ignored', () => {
    assert.equal(
      parse({ fieldSelector: 'x', role: 'master', foo: ['a', 'b'] }).canonical,
      parse({}).canonical,
    );
  });

  test('canonical form: equal for equivalent queries, different otherwise', () => {
    assert.equal(parse({ sortBy: 'createTime' }).canonical, parse({}).canonical);
    assert.equal(parse({ page: '4' }).canonical, parse({}).canonical, 'page is ignored without a limit');
    assert.equal(parse({ labelSelector: 'a = b' }).canonical, parse({ labelSelector: 'a==b' }).canonical);
    assert.notEqual(parse({ limit: '10', page: '2' }).canonical, parse({ limit: '10' }).canonical);
    assert.notEqual(parse({ ascending: 'true' }).canonical, parse({}).canonical);
    assert.notEqual(parse({ status: 'running' }).canonical, parse({}).canonical);
  });

  test('malformed values are 400s naming the parameter', () => {
    rejects({ page: '0' }, 'page', /≥ 1/);
    rejects({ page: '-1' }, 'page', /≥ 1/);
    rejects({ page: 'x' }, 'page', /≥ 1/);
    rejects({ page: '1.5' }, 'page', /≥ 1/);
    rejects({ page: '' }, 'page', /≥ 1/);
    rejects({ page: '99999999999999999999' }, 'page', /≥ 1/);
    rejects({ limit: 'abc' }, 'limit', /≥ 1, or -1/);
    rejects({ limit: '0' }, 'limit', /≥ 1, or -1/);
    rejects({ limit: '-2' }, 'limit', /≥ 1, or -1/);
    rejects({ limit: '01' }, 'limit', /≥ 1, or -1/);
    rejects({ sortBy: 'age' }, 'sortBy', /name, creationTimestamp, createTime/);
    rejects({ sortBy: '__proto__' }, 'sortBy', /one of/);
    rejects({ ascending: 'yes' }, 'ascending', /true or false/);
    rejects({ labelSelector: 'a in b' }, 'labelSelector', /expected: '\('/);
    rejects({ status: 'ready' }, 'status', /running, warning, unschedulable/);
    rejects({ status: '' }, 'status', /one of/);
  });

  test('a known parameter given twice is a 400', () => {
    rejects({ limit: ['1', '2'] }, 'limit', /at most once/);
    rejects({ labelSelector: ['a', 'b'] }, 'labelSelector', /at most once/);
  });

  test('status is an unknown parameter for kinds without statuses', () => {
    assert.equal(parseListQuery({ status: 'whatever' }).status, undefined);
  });
});

describe('list queries parsed once per query string', () => {
  test('one parse per query text, shared read-only; each invalid query refused every time', () => {
    const parser = new ListQueryParser({ statuses: NODE_STATUSES });
    let parses = 0;
    const raw = (query: Record<string, unknown>) => () => {
      parses++;
      return query;
    };
    const first = parser.parse('/nodes?limit=10&sortBy=name', raw({ limit: '10', sortBy: 'name' }));
    const again = parser.parse('/nodes?limit=10&sortBy=name', raw({ limit: '10', sortBy: 'name' }));
    assert.equal(again, first);
    assert.ok(Object.isFrozen(first));
    assert.equal(first.limit, 10);
    assert.equal(first.sortBy, 'name');
    assert.equal(parses, 1);
    assert.equal(
      parser.parse('/other/path?limit=10&sortBy=name', raw({})),
      first,
      'keyed by the query alone',
    );
    assert.equal(parser.parse('/nodes?limit=20', raw({ limit: '20' })).limit, 20);
    assert.equal(parser.parse('/nodes', raw({})).limit, undefined);
    assert.equal(parses, 3);
    for (let i = 0; i < 2; i++) {
      assert.throws(() => parser.parse('/nodes?limit=0', raw({ limit: '0' })), /"limit"/);
    }
    assert.equal(parses, 5, 'an invalid query is not kept');
  });

  test('bounded: a full cache starts over, and long query strings are never kept', () => {
    const parser = new ListQueryParser({}, 2);
    let parses = 0;
    const parse = (url: string) =>
      parser.parse(url, () => {
        parses++;
        return {};
      });
    parse('?a=1');
    parse('?a=2');
    parse('?a=3'); // the cache held two: emptied, then holds this one
    parse('?a=3');
    assert.equal(parses, 3);
    parse('?a=1');
    assert.equal(parses, 4);
    const long = `?name=${'x'.repeat(600)}`;
    parse(long);
    parse(long);
    assert.equal(parses, 6);
  });
});
