import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SharedValues } from '../../src/iam/shared-values.ts';

test('equal values are one frozen instance; different ones stay apart', () => {
  const pool = new SharedValues();
  const rules = () => [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] }];
  const first = pool.share(rules());
  const second = pool.share(rules());
  assert.equal(second, first);
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first[0]) && Object.isFrozen(first[0]!.verbs));
  const other = pool.share([{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }]);
  assert.notEqual(other, first);
  assert.deepEqual(other[0]!.verbs, ['get']);
  assert.equal(pool.size, 2);
});

test('scalars and null pass through untouched', () => {
  const pool = new SharedValues();
  assert.equal(pool.share('admin'), 'admin');
  assert.equal(pool.share(null), null);
  assert.equal(pool.share(undefined), undefined);
  assert.equal(pool.size, 0);
});
