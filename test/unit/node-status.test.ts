import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeStatusOf, type NodeLike } from '../../src/nodes/node-status.ts';

const healthy = [
  { type: 'MemoryPressure', status: 'False' },
  { type: 'DiskPressure', status: 'False' },
  { type: 'PIDPressure', status: 'False' },
  { type: 'Ready', status: 'True' },
];

function node(
  conditions: { type: string; status: string }[] = healthy,
  spec: NodeLike['spec'] = {},
): NodeLike {
  return { spec, status: { conditions } };
}

function withCondition(type: string, status: string) {
  return [...healthy.filter((c) => c.type !== type), { type, status }];
}

describe('node status', () => {
  test('running: Ready, no pressure, no trouble taints', () => {
    assert.equal(nodeStatusOf(node()), 'running');
    assert.equal(
      nodeStatusOf(node(healthy, { taints: [{ key: 'node-role.kubernetes.io/control-plane' }] })),
      'running',
      'ordinary NoSchedule taints are not trouble',
    );
    assert.equal(
      nodeStatusOf(node([...healthy, { type: 'NetworkUnavailable', status: 'False' }])),
      'running',
    );
  });

  test('unschedulable: cordoned or carrying the unschedulable taint; wins over warnings', () => {
    assert.equal(nodeStatusOf(node(healthy, { unschedulable: true })), 'unschedulable');
    assert.equal(
      nodeStatusOf(node(healthy, { taints: [{ key: 'node.kubernetes.io/unschedulable' }] })),
      'unschedulable',
    );
    assert.equal(
      nodeStatusOf(node(withCondition('Ready', 'False'), { unschedulable: true })),
      'unschedulable',
    );
  });

  test('warning: Ready not True, or missing', () => {
    assert.equal(nodeStatusOf(node(withCondition('Ready', 'False'))), 'warning');
    assert.equal(nodeStatusOf(node(withCondition('Ready', 'Unknown'))), 'warning');
    assert.equal(nodeStatusOf(node(healthy.filter((c) => c.type !== 'Ready'))), 'warning');
    assert.equal(nodeStatusOf({}), 'warning');
  });

  test('warning: a pressure condition not False', () => {
    for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable']) {
      assert.equal(nodeStatusOf(node(withCondition(type, 'True'))), 'warning', type);
      assert.equal(nodeStatusOf(node(withCondition(type, 'Unknown'))), 'warning', type);
    }
  });

  test('warning: legacy health conditions not True', () => {
    assert.equal(nodeStatusOf(node(withCondition('ConfigOK', 'False'))), 'warning');
    assert.equal(nodeStatusOf(node(withCondition('KubeletReady', 'Unknown'))), 'warning');
    assert.equal(nodeStatusOf(node(withCondition('ConfigOK', 'True'))), 'running');
  });

  test('warning: node lifecycle trouble taints', () => {
    for (const key of ['not-ready', 'unreachable', 'memory-pressure', 'disk-pressure', 'out-of-service']) {
      assert.equal(
        nodeStatusOf(node(healthy, { taints: [{ key: `node.kubernetes.io/${key}` }] })),
        'warning',
        key,
      );
    }
  });

  test('unrelated conditions do not matter', () => {
    assert.equal(
      nodeStatusOf(node([...healthy, { type: 'FrequentKubeletRestart', status: 'True' }])),
      'running',
    );
  });
});
