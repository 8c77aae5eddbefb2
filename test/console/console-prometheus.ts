import { clusterOpenMetrics, type ClusterData, type NodeSpec } from '../support/monitoring-data.ts';
import { RECORDING_RULES, startTestPrometheus, type TestPrometheus } from '../support/test-prometheus.ts';
import { SEED } from './console-cluster.ts';

/** How far back the series reach (the console's longest range on the pages tried is 12 h, at 4,320 s steps). */
const HISTORY_SECONDS = 2 * 3600;
/** How far ahead: the console asks for "now" all through the run, and an instant query looks back 5 minutes. */
const AHEAD_SECONDS = 3600;
const INTERVAL_SECONDS = 30;

/** The cluster overview's Kubernetes status: 20 requests/s of 50 ms each, 120 pods scheduled and 3 errors. */
export const CONTROL_PLANE = {
  apiserverRequestsPerSecond: 20,
  apiserverLatencySeconds: 0.05,
  scheduled: 120,
  scheduleErrors: 3,
};

/** One line per node the seed creates (`node-0000` …), each a little busier than the one before. */
function seedNodes(): NodeSpec[] {
  return Array.from({ length: SEED.nodes }, (_, i) => ({
    name: `node-${String(i).padStart(4, '0')}`,
    cpus: 4,
    busy: 0.1 + (0.8 * i) / SEED.nodes,
    memoryTotal: 16e9,
    memoryAvailable: 16e9 - (4e9 + i * 3e8),
    podCapacity: 110,
    io: {
      diskSize: 100e9,
      diskAvailable: 100e9 - (20e9 + i * 1e9),
      inodes: 6_000_000,
      inodesFree: 5_000_000 - i * 10_000,
      load: 0.5 + i / 10,
      diskOps: 40,
      diskBytes: 2e6,
      networkBytes: 1e6 + i * 1e5,
    },
  }));
}

/**
 * The console cluster's series as node_exporter, the kubelet and kube-state-metrics would expose them —
 * its nodes, `demo-project` in `demo-ws`, the Deployment's two pods on SEED.node — from two hours ago to
 * an hour ahead (the pages ask for ranges ending now, and for now), with the shipped recording rules
 * backfilled over the same span.
 */
export function consoleClusterData(nowSeconds: number): ClusterData {
  const start = Math.floor((nowSeconds - HISTORY_SECONDS) / 60) * 60;
  const replicaSet = SEED.pods[0].replace(/-[^-]+$/, '');
  return {
    start,
    end: start + HISTORY_SECONDS + AHEAD_SECONDS,
    intervalSeconds: INTERVAL_SECONDS,
    nodes: seedNodes(),
    namespaces: [{ name: SEED.project, workspace: SEED.workspace }],
    controlPlane: CONTROL_PLANE,
    pods: SEED.pods.map((name, i) => ({
      namespace: SEED.project,
      name,
      node: SEED.node,
      ownerKind: 'ReplicaSet',
      ownerName: replicaSet,
      phase: 'Running' as const,
      cpu: 0.125 * (i + 1),
      memoryWorkingSet: 64e6 * (i + 1),
      memoryUsage: 96e6 * (i + 1),
      networkBytes: 2e4 * (i + 1),
    })),
  };
}

/** A real Prometheus holding the console cluster's series (test/support/test-prometheus.ts). */
export async function startConsolePrometheus(): Promise<TestPrometheus> {
  const data = consoleClusterData(Math.floor(Date.now() / 1000));
  return startTestPrometheus({
    openMetrics: clusterOpenMetrics(data),
    rules: { file: RECORDING_RULES, start: data.start, end: data.end, evalIntervalSeconds: 60 },
  });
}
