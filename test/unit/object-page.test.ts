import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseListQuery } from '../../src/list-query/list-query.ts';
import type { KubeObject } from '../../src/tenant/kube-object.ts';
import { pageObjects } from '../../src/tenant/object-page.ts';

const ALIAS = 'p.io/alias-name';
const obj = (
  name: string,
  created: string,
  labels: Record<string, string> = {},
  alias?: string,
): KubeObject => ({
  metadata: {
    name,
    uid: `uid-${name}`,
    creationTimestamp: created,
    labels,
    ...(alias ? { annotations: { [ALIAS]: alias } } : {}),
  },
});
const objects = [
  obj('beta', '2024-01-02T00:00:00Z', { tier: 'gold' }, 'Team Beta'),
  obj('alpha', '2024-01-03T00:00:00Z'),
  obj('gamma', '2024-01-01T00:00:00Z', { tier: 'silver' }),
  obj('delta', '2024-01-02T00:00:00Z'),
];
const page = (query: Record<string, string>) => pageObjects(objects, parseListQuery(query), ALIAS);
const names = (p: { items: KubeObject[] }) => p.items.map((o) => o.metadata.name);

test('default: newest first, ties by name (descending with the order); total before paging', () => {
  assert.deepEqual(names(page({})), ['alpha', 'delta', 'beta', 'gamma']);
  const second = page({ limit: '3', page: '2' });
  assert.deepEqual(names(second), ['gamma']);
  assert.equal(second.totalItems, 4);
});

test('sortBy=name ascending; filters by name, names, uid, labelSelector and alias', () => {
  assert.deepEqual(names(page({ sortBy: 'name', ascending: 'true' })), ['alpha', 'beta', 'delta', 'gamma']);
  assert.deepEqual(names(page({ name: 'ta' })), ['delta', 'beta']);
  assert.deepEqual(names(page({ names: 'gamma,alpha' })), ['alpha', 'gamma']);
  assert.deepEqual(names(page({ uid: 'uid-beta' })), ['beta']);
  assert.deepEqual(names(page({ labelSelector: '!tier' })), ['alpha', 'delta']);
  assert.deepEqual(names(page({ labelSelector: 'tier!=gold', sortBy: 'name', ascending: 'true' })), [
    'alpha',
    'delta',
    'gamma',
  ]);
  assert.deepEqual(names(page({ alias: 'Beta' })), ['beta']);
});
