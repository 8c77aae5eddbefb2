import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseListQuery } from '../../src/list-query/list-query.ts';
import { NodeIndex } from '../../src/nodes/node-index.ts';
import { NODE_STATUSES } from '../../src/nodes/node-status.ts';
import { nodeEntry, nodeView, withAllocation, type RawNode } from '../../src/nodes/node-view.ts';
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

  test('names, uid, label, annotation and alias filters, with paging', () => {
    const idx = new NodeIndex({ aliasAnnotation: 'platform.io/alias-name' });
    for (const [i, node] of nodes.entries()) {
      if (i % 3 === 0)
        node.metadata!.annotations = { ...node.metadata!.annotations, 'platform.io/alias-name': `Rack ${i}` };
      idx.upsert(nodeEntry(node));
    }
    const sorted = { sortBy: 'name', ascending: 'true' };
    assert.deepEqual(names(idx, { ...sorted, names: 'n-0003,n-0001,nope' }).names, ['n-0001', 'n-0003']);
    assert.deepEqual(names(idx, { uid: nodes[4]!.metadata!.uid! }).names, ['n-0004']);
    assert.equal(names(idx, { uid: 'nope' }).total, 0);
    assert.equal(names(idx, { label: 'node-role.kubernetes.io/control-plane' }).total, 6);
    assert.equal(
      names(idx, { label: 'node-role.kubernetes.io/worker', labelSelector: 'kubernetes.io/arch=arm64' })
        .total,
      5,
      'label and labelSelector both hold',
    );
    assert.equal(names(idx, { annotation: 'node.alpha.kubernetes.io/ttl=0' }).total, 30);
    assert.equal(names(idx, { annotation: 'platform.io/alias-name' }).total, 10);
    assert.equal(names(idx, { annotation: '!platform.io/alias-name' }).total, 20);
    assert.deepEqual(names(idx, { ...sorted, alias: 'Rack 1' }).names, ['n-0012', 'n-0015', 'n-0018']);
    assert.deepEqual(names(idx, { ...sorted, alias: 'ack 2', limit: '2', page: '2' }), {
      names: ['n-0027'],
      total: 3,
    });
    assert.equal(names(idx, { alias: 'rack' }).total, 0, 'case-sensitive');
  });

  test('lastUpdateTimestamp: the latest condition transition, else creation; ties by name', () => {
    const idx = new NodeIndex();
    const at = (i: number, transition: string | undefined, rv?: string) => {
      const node = raw(i, { created: `2026-01-01T00:00:0${i}Z`, ...(rv ? { rv } : {}) });
      const status = node['status'] as { conditions: { lastTransitionTime?: string }[] };
      if (transition === undefined) status.conditions = [];
      else
        status.conditions.forEach(
          (c, k) => (c.lastTransitionTime = k === 0 ? transition : '2025-01-01T00:00:00Z'),
        );
      return node;
    };
    idx.upsert(nodeEntry(at(1, '2026-03-01T00:00:00Z')));
    idx.upsert(nodeEntry(at(2, undefined))); // never reported: its creation time
    idx.upsert(nodeEntry(at(3, '2026-02-01T00:00:00Z')));
    idx.upsert(nodeEntry(at(4, '2026-02-01T00:00:00Z')));
    assert.deepEqual(names(idx, { sortBy: 'lastUpdateTimestamp', ascending: 'true' }).names, [
      'n-0002',
      'n-0003',
      'n-0004',
      'n-0001',
    ]);
    assert.deepEqual(names(idx, { sortBy: 'updateTime' }).names, ['n-0001', 'n-0004', 'n-0003', 'n-0002']);
    // A transition moves the node.
    idx.upsert(nodeEntry(at(2, '2026-04-01T00:00:00Z', '7777')));
    assert.equal(names(idx, { sortBy: 'updateTime' }).names[0], 'n-0002');
  });
});

describe('allocation annotations in the served bytes', () => {
  const prefix = 'node.kubesphere.io/';
  const sums = { cpuRequests: 350, cpuLimits: 0, memoryRequests: 384 * 2 ** 20, memoryLimits: 0 };

  test('appended to the annotations; spliced on change without touching the rest; ETag follows', () => {
    const node = raw(1);
    node.metadata!.annotations![`${prefix}cpu-requests`] = 'stale value on the Node itself';
    const zero = nodeEntry(node, {
      prefix,
      sums: { cpuRequests: 0, cpuLimits: 0, memoryRequests: 0, memoryLimits: 0 },
    });
    const served = JSON.parse(zero.json.toString()) as RawNode;
    const annotations = served.metadata!.annotations!;
    assert.deepEqual(Object.keys(annotations).slice(-8), [
      `${prefix}cpu-requests`,
      `${prefix}cpu-limits`,
      `${prefix}memory-requests`,
      `${prefix}memory-limits`,
      `${prefix}cpu-requests-fraction`,
      `${prefix}cpu-limits-fraction`,
      `${prefix}memory-requests-fraction`,
      `${prefix}memory-limits-fraction`,
    ]);
    assert.equal(annotations[`${prefix}cpu-requests`], '0');
    assert.equal(annotations['platform.io/labels'], node.metadata!.annotations!['platform.io/labels']);

    const changed = withAllocation(zero, { prefix, sums });
    const after = JSON.parse(changed.json.toString()) as RawNode;
    assert.equal(after.metadata!.annotations![`${prefix}cpu-requests`], '350m');
    assert.equal(after.metadata!.annotations![`${prefix}memory-requests`], '384Mi');
    // n-0001 allocatable: 7900m CPU, 31744Mi memory.
    assert.equal(after.metadata!.annotations![`${prefix}cpu-requests-fraction`], '4%');
    assert.equal(after.metadata!.annotations![`${prefix}memory-requests-fraction`], '1%');
    assert.deepEqual(
      { ...after, metadata: { ...after.metadata, annotations: undefined } },
      {
        ...served,
        metadata: { ...served.metadata, annotations: undefined },
      },
    );
    assert.notEqual(changed.etag, zero.etag);
    assert.ok(changed.etag.startsWith(`W/"${zero.resourceVersion}.`));
    assert.deepEqual(nodeEntry(node, { prefix, sums }).json, changed.json, 'splice = fresh serialisation');
    assert.equal(withAllocation(changed, { prefix, sums }), changed, 'no change: same entry');

    const bare = raw(2);
    delete bare.metadata!.annotations;
    const keys = Object.keys((JSON.parse(nodeEntry(bare).json.toString()) as RawNode).metadata!);
    assert.equal(
      keys[keys.indexOf('labels') + 1],
      'annotations',
      'a Node without annotations gets them after labels',
    );
  });
});
