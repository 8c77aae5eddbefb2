import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { allocationAnnotations } from '../../src/nodes/node-allocation.ts';
import { occupiesNode, podFootprint, type RawPod } from '../../src/nodes/pod-resources.ts';
import { formatBytes, formatMilli, milliValue, unitValue } from '../../src/nodes/quantity.ts';

describe('quantities', () => {
  test('parsed exactly and rounded up as the scheduler counts', () => {
    const milli: [string, number | undefined][] = [
      ['100m', 100],
      ['0.1', 100],
      ['.5', 500],
      ['2', 2000],
      ['1.5', 1500],
      ['1u', 1],
      ['1500000n', 2],
      ['1k', 1_000_000],
      ['2e-3', 2],
      ['1E1', 10_000],
      ['abc', undefined],
      ['1.2.3', undefined],
      ['', undefined],
      ['1Qi', undefined],
    ];
    for (const [text, expected] of milli) assert.equal(milliValue(text), expected, text);
    const units: [string, number | undefined][] = [
      ['128Mi', 128 * 2 ** 20],
      ['1Gi', 2 ** 30],
      ['1.5Gi', 1.5 * 2 ** 30],
      ['1G', 1e9],
      ['1k', 1000],
      ['1Ki', 1024],
      ['100m', 1],
      ['0', 0],
      ['1e3', 1000],
      ['1E', 1e18],
    ];
    for (const [text, expected] of units) assert.equal(unitValue(text), expected, text);
  });

  test("printed in Kubernetes' canonical forms", () => {
    assert.equal(formatMilli(0), '0');
    assert.equal(formatMilli(350), '350m');
    assert.equal(formatMilli(2000), '2');
    assert.equal(formatMilli(1500), '1500m');
    assert.equal(formatMilli(2_000_000), '2k');
    assert.equal(formatBytes(0), '0');
    assert.equal(formatBytes(384 * 2 ** 20), '384Mi');
    assert.equal(formatBytes(2 ** 30), '1Gi');
    assert.equal(formatBytes(1536 * 2 ** 20), '1536Mi');
    assert.equal(formatBytes(1e9), '1G');
    assert.equal(formatBytes(1_500_000_000), '1500M');
    assert.equal(formatBytes(1_000_001), '1000001');
    assert.equal(formatBytes(2 ** 27 + 1e9), '1134217728');
  });
});

const container = (name: string, requests?: Record<string, string>, limits?: Record<string, string>) => ({
  name,
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
});

function pod(spec: RawPod['spec'], status: RawPod['status'] = { phase: 'Running' }): RawPod {
  return { metadata: { name: 'p', namespace: 'ns' }, spec: { nodeName: 'n1', ...spec }, status };
}

describe("Kubernetes' per-pod rule", () => {
  test('app containers add up; an unset resource adds nothing', () => {
    const footprint = podFootprint(
      pod({
        containers: [
          container('a', { cpu: '100m', memory: '128Mi' }, { cpu: '200m' }),
          container('b', { cpu: '250m', memory: '256Mi' }, { memory: '512Mi' }),
          container('c'),
        ],
      }),
    );
    assert.deepEqual(footprint, {
      cpuRequests: 350,
      cpuLimits: 200,
      memoryRequests: 384 * 2 ** 20,
      memoryLimits: 512 * 2 ** 20,
    });
  });

  test('init containers: the larger of their peak and the app containers, per resource', () => {
    const footprint = podFootprint(
      pod({
        initContainers: [
          container('init1', { cpu: '1', memory: '64Mi' }, { cpu: '2' }),
          container('init2', { cpu: '100m', memory: '1Gi' }),
        ],
        containers: [container('app', { cpu: '500m', memory: '256Mi' }, { cpu: '1', memory: '512Mi' })],
      }),
    );
    assert.deepEqual(footprint, {
      cpuRequests: 1000,
      cpuLimits: 2000,
      memoryRequests: 2 ** 30,
      memoryLimits: 512 * 2 ** 20,
    });
  });

  test('sidecars (restartable init containers) run beside everything after them', () => {
    const sidecar = { ...container('sidecar', { cpu: '100m', memory: '64Mi' }), restartPolicy: 'Always' };
    const footprint = podFootprint(
      pod({
        initContainers: [
          container('before', { cpu: '300m' }),
          sidecar,
          container('after', { cpu: '500m', memory: '100Mi' }),
        ],
        containers: [container('app', { cpu: '200m', memory: '128Mi' })],
      }),
    );
    // Init peak: max(300m, 100m, 500m+100m) = 600m; app phase: 200m + 100m = 300m.
    // Memory: init peak max(0, 64Mi, 100Mi+64Mi) = 164Mi; app phase 128Mi + 64Mi = 192Mi.
    assert.deepEqual(footprint, {
      cpuRequests: 600,
      cpuLimits: 0,
      memoryRequests: 192 * 2 ** 20,
      memoryLimits: 0,
    });
  });

  test('overhead adds to requests, and to limits only where a limit is set', () => {
    const footprint = podFootprint(
      pod({
        containers: [container('app', { cpu: '100m', memory: '100Mi' }, { cpu: '200m' })],
        overhead: { cpu: '250m', memory: '120Mi' },
      }),
    );
    assert.deepEqual(footprint, {
      cpuRequests: 350,
      cpuLimits: 450,
      memoryRequests: 220 * 2 ** 20,
      memoryLimits: 0,
    });
  });

  test('pod-level resources replace the container aggregate where set; overhead still adds', () => {
    const footprint = podFootprint(
      pod({
        containers: [container('a', { cpu: '100m', memory: '100Mi' }, { cpu: '300m', memory: '1Gi' })],
        resources: { requests: { cpu: '1' }, limits: { cpu: '2' } },
        overhead: { cpu: '10m' },
      }),
    );
    assert.deepEqual(footprint, {
      cpuRequests: 1010,
      cpuLimits: 2010,
      memoryRequests: 100 * 2 ** 20,
      memoryLimits: 2 ** 30,
    });
  });

  test('in-place resize: the larger of desired and actuated, only the actuated when infeasible', () => {
    const spec = { containers: [container('a', { cpu: '200m' }, { cpu: '400m' })] };
    const statuses = [{ name: 'a', resources: { requests: { cpu: '500m' }, limits: { cpu: '1' } } }];
    assert.equal(podFootprint(pod(spec, { phase: 'Running', containerStatuses: statuses })).cpuRequests, 500);
    const infeasible = {
      phase: 'Running',
      containerStatuses: [{ name: 'a', resources: { requests: { cpu: '100m' } } }],
      conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }],
    };
    assert.equal(podFootprint(pod(spec, infeasible)).cpuRequests, 100);
  });

  test('only bound pods that have not finished occupy a node', () => {
    assert.equal(occupiesNode(pod({}, { phase: 'Running' })), true);
    assert.equal(occupiesNode(pod({}, { phase: 'Pending' })), true);
    assert.equal(occupiesNode(pod({}, {})), true);
    assert.equal(occupiesNode(pod({}, { phase: 'Succeeded' })), false);
    assert.equal(occupiesNode(pod({}, { phase: 'Failed' })), false);
    assert.equal(occupiesNode({ spec: {}, status: { phase: 'Pending' } }), false);
  });
});

describe('allocation annotations', () => {
  test('quantities and truncated percentages of allocatable; 0 and 0% without pods', () => {
    const sums = { cpuRequests: 350, cpuLimits: 1999, memoryRequests: 384 * 2 ** 20, memoryLimits: 0 };
    assert.deepEqual(allocationAnnotations('node.kubesphere.io/', sums, { cpu: 3900, memory: 2 ** 30 }), [
      ['node.kubesphere.io/cpu-requests', '350m'],
      ['node.kubesphere.io/cpu-limits', '1999m'],
      ['node.kubesphere.io/memory-requests', '384Mi'],
      ['node.kubesphere.io/memory-limits', '0'],
      ['node.kubesphere.io/cpu-requests-fraction', '8%'],
      ['node.kubesphere.io/cpu-limits-fraction', '51%'],
      ['node.kubesphere.io/memory-requests-fraction', '37%'],
      ['node.kubesphere.io/memory-limits-fraction', '0%'],
    ]);
    const zero = { cpuRequests: 0, cpuLimits: 0, memoryRequests: 0, memoryLimits: 0 };
    assert.deepEqual(
      allocationAnnotations('node.p.io/', zero, { cpu: 0, memory: 0 }).map(([, v]) => v),
      ['0', '0', '0', '0', '0%', '0%', '0%', '0%'],
    );
  });
});
