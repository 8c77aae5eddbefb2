import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestIdFrom } from '../../src/http/request-id.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('a plain, short X-Request-Id is kept', () => {
  assert.equal(requestIdFrom('abc-123_x.y:z'), 'abc-123_x.y:z');
  assert.equal(requestIdFrom('3f2b0c1e-1111-4222-8333-444455556666'), '3f2b0c1e-1111-4222-8333-444455556666');
});

test('anything else is replaced by a fresh UUID: long, odd characters, repeated, token-shaped', () => {
  for (const value of [
    undefined,
    '',
    'x'.repeat(65),
    'has space',
    'semi;colon',
    '\u00e9t\u00e9',
    ['a', 'b'],
    'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln',
    'aaaa.bbbb.cccc',
  ]) {
    assert.match(requestIdFrom(value), UUID, JSON.stringify(value));
  }
});
