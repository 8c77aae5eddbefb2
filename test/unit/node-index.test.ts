import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseListQuery } from '../../src/list-query/list-query.ts';
import { NodeIndex } from '../../src/nodes/node-index.ts';
import { NODE_STATUSES } from '../../src/nodes/node-status.ts';
import { nodeEntry, nodeView, type RawNode } from '../../src/nodes/node-view.ts';
import { nodeFixture } from '../cluster/node-fixtures.ts';

/** A fixture as the apiserver would send it: JSON text types, server-set metadata. */
function raw(index: number, options: { created?: string; rv?: string; prefix?: string } = {}): RawNode {
  const node = JSON.parse(JSON.stringify(nodeFixture(index, { prefix: options.prefix ?? 'n' }))) as RawNode;
  node.metadata = {
    ...node.metadata,
    uid: `00000000-0000-0000-0000-${String(index).padStart(12, '0')}`,
    resourceVersion: options.rv ?? String(1000 + index),
    creationTimestamp: options.created ?? `2026-01-01T00:00:${String(index % 60).padStart(2, '0')}Z`,
    managedFields: [{ manager: 'kubelet', operation: 'Update' }],
  };
  return node;
}

const q = (query: Record<string, string> = {}) => parseListQuery(query, { statuses: NODE_STATUSES });

function names(index: NodeIndex, query: Record<string, string> = {}) {
  const selection = index.select(q(query));
  return { names: selection.items.map((e) => e.name), total: selection.totalItems };
}

function indexOf(nodes: RawNode[]): NodeIndex {
  const index = new NodeIndex();
  for (const node of nodes) index.upsert(nodeEntry(node));
  return index;
}

describe('node view', () => {
  test('served JSON: TypeMeta, selfLink after name, no managedFields, everything else verbatim', () => {
    const node = raw(7);
    const entry = nodeEntry(node);
    const text = entry.json.toString();
    const served = JSON.parse(text) as RawNode;
    assert.ok(text.startsWith('{"kind":"Node","apiVersion":"v1","metadata":{"name":"n-0007","selfLink":'));
    assert.equal(served.metadata?.['selfLink'], '/api/v1/nodes/n-0007');
    assert.equal(served.metadata?.managedFields, undefined);
    assert.equal(served.metadata?.uid, node.metadata?.uid);
    assert.equal(served.metadata?.creationTimestamp, node.metadata?.creationTimestamp);
    assert.equal(served.metadata?.labels?.['node-role.kubernetes.io/worker'], '');
    assert.equal(
      served.metadata?.annotations?.['platform.io/labels'],
      node.metadata?.annotations?.['platform.io/labels'],
    );
    assert.deepEqual(served['spec'], node['spec']);
    assert.deepEqual(served['status'], node['status']);
    assert.ok(Object.isFrozen(entry));
  });

  test('the input is never modified', () => {
    const node = raw(3);
    const before = JSON.stringify(node);
    nodeView(node);
    nodeEntry(node);
    assert.equal(JSON.stringify(node), before);
  });
});

describe('node index', () => {
  // 30 nodes; creation seconds 0..29 except that 10..14 all share second 10 (ties broken by name).
  const nodes = Array.from({ length: 30 }, (_, i) =>
    raw(i, { created: `2026-01-01T00:00:${String(i >= 10 && i < 15 ? 10 : i).padStart(2, '0')}Z` }),
  );
  // Insert out of order, as a relist might deliver them.
  const index = indexOf([...nodes].reverse().sort((a, b) => (a.metadata!.uid! < b.metadata!.uid! ? 1 : -1)));

  test('default order: newest first, ties by name descending (the original reverses the whole order)', () => {
    const { names: all, total } = names(index);
    assert.equal(total, 30);
    assert.deepEqual(all.slice(0, 3), ['n-0029', 'n-0028', 'n-0027']);
    assert.deepEqual(all.slice(15, 20), ['n-0014', 'n-0013', 'n-0012', 'n-0011', 'n-0010']);
  });

  test('ascending creation, ties by name ascending', () => {
    const { names: all } = names(index, { ascending: 'true' });
    assert.deepEqual(all.slice(9, 16), [
      'n-0009',
      'n-0010',
      'n-0011',
      'n-0012',
      'n-0013',
      'n-0014',
      'n-0015',
    ]);
  });

  test('by name, both directions', () => {
    assert.deepEqual(names(index, { sortBy: 'name', ascending: 'true', limit: '3' }).names, [
      'n-0000',
      'n-0001',
      'n-0002',
    ]);
    assert.deepEqual(names(index, { sortBy: 'name', limit: '2' }).names, ['n-0029', 'n-0028']);
  });

  test('paging: pages tile the whole order without gaps or repeats; past the end is empty with the total', () => {
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const { names: items, total } = names(index, { sortBy: 'createTime', limit: '8', page: String(page) });
      assert.equal(total, 30);
      assert.equal(items.length, page < 4 ? 8 : 6);
      seen.push(...items);
    }
    assert.deepEqual(seen, names(index).names);
    assert.deepEqual(names(index, { limit: '8', page: '5' }), { names: [], total: 30 });
    assert.deepEqual(names(index, { limit: '100', page: '1' }).names.length, 30);
  });

  test('filters: name substring, label selector, status; totals count after filtering', () => {
    assert.deepEqual(names(index, { name: '-001', sortBy: 'name', ascending: 'true' }).names, [
      'n-0010',
      'n-0011',
      'n-0012',
      'n-0013',
      'n-0014',
      'n-0015',
      'n-0016',
      'n-0017',
      'n-0018',
      'n-0019',
    ]);
    assert.equal(names(index, { name: 'N-00' }).total, 0, 'case-sensitive like the original');
    // Fixture roles cycle control-plane, worker, worker, worker, edge.
    assert.equal(names(index, { labelSelector: 'node-role.kubernetes.io/control-plane' }).total, 6);
    assert.equal(
      names(index, { labelSelector: 'node-role.kubernetes.io/worker,kubernetes.io/arch=arm64' }).total,
      5,
    );
    // Every 7th (6, 13, 20, 27) is unschedulable; every 11th (10, 21) NotReady; every 13th (12, 25) under memory pressure.
    assert.deepEqual(names(index, { status: 'unschedulable', sortBy: 'name', ascending: 'true' }).names, [
      'n-0006',
      'n-0013',
      'n-0020',
      'n-0027',
    ]);
    assert.deepEqual(names(index, { status: 'warning', sortBy: 'name', ascending: 'true' }).names, [
      'n-0010',
      'n-0012',
      'n-0021',
      'n-0025',
    ]);
    assert.equal(names(index, { status: 'running' }).total, 22);
    const combined = names(index, {
      status: 'running',
      labelSelector: 'topology.kubernetes.io/zone=zone-a',
      name: 'n-00',
      sortBy: 'name',
      limit: '2',
      page: '2',
    });
    // zone-a: indexes divisible by 3 → 0,3,9,15,18,24 running (6, 12, 21, 27 are not).
    assert.deepEqual(combined, { names: ['n-0015', 'n-0009'], total: 6 });
  });

  test('updates keep the order; changes of content bump the generation, replays do not', () => {
    const idx = indexOf(nodes);
    const generation = idx.generation;
    idx.upsert(nodeEntry(raw(5, { created: '2026-01-01T00:00:05Z', rv: '5000' })));
    assert.equal(idx.generation, generation + 1);
    idx.upsert(nodeEntry(raw(5, { created: '2026-01-01T00:00:05Z', rv: '5000' })));
    assert.equal(idx.generation, generation + 1, 'same resourceVersion: no change');
    assert.equal(idx.get('n-0005')?.resourceVersion, '5000');
    assert.deepEqual(names(idx).names, names(index).names);

    // A re-created node with a new creation time moves.
    idx.upsert(nodeEntry(raw(5, { created: '2026-01-02T00:00:00Z', rv: '5001' })));
    assert.equal(names(idx).names[0], 'n-0005');
    idx.delete('n-0005');
    idx.delete('n-0005');
    assert.equal(idx.size, 29);
    assert.equal(names(idx).total, 29);
    assert.ok(!names(idx, { sortBy: 'name' }).names.includes('n-0005'));
  });

  test('a status change moves a node between status filters', () => {
    const idx = indexOf(nodes.slice(0, 5));
    assert.equal(names(idx, { status: 'unschedulable' }).total, 0);
    const cordoned = raw(2, { created: '2026-01-01T00:00:02Z', rv: '9000' });
    (cordoned['spec'] as Record<string, unknown>)['unschedulable'] = true;
    idx.upsert(nodeEntry(cordoned));
    assert.deepEqual(names(idx, { status: 'unschedulable' }).names, ['n-0002']);
  });
});
