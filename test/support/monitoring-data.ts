/**
 * Deterministic cluster series in OpenMetrics, shaped as node_exporter, the kubelet's cAdvisor and
 * kube-state-metrics expose them (with the labels the original's Prometheus relabels on: `job`,
 * `namespace`/`pod` of the exporter pod, `workspace` on kube_namespace_labels). Counters grow by a fixed
 * amount per sample, so every rate is exact: a value a test asserts is arithmetic, not a measurement.
 */

export interface NodeSpec {
  name: string;
  cpus: number;
  /** Busy share of each CPU, e.g. 0.25 (user-mode seconds per second). */
  busy: number;
  memoryTotal: number;
  /** Free + cached + buffers + reclaimable bytes (node_memory_MemFree_bytes carries it all). */
  memoryAvailable: number;
  podCapacity: number;
  /** Its one disk, load and traffic (node_exporter's), for the pages that chart them; absent: no such series. */
  io?: NodeIo;
}

export interface NodeIo {
  diskSize: number;
  diskAvailable: number;
  inodes: number;
  inodesFree: number;
  /** node_load1, node_load5 and node_load15 alike. */
  load: number;
  /** Disk reads and writes per second (each), and bytes per second read and written (each). */
  diskOps: number;
  diskBytes: number;
  /** Bytes per second received and transmitted (each) on `eth0`. */
  networkBytes: number;
}

export interface PodSpec {
  namespace: string;
  name: string;
  node: string;
  ownerKind: string;
  ownerName: string;
  phase: 'Running' | 'Pending' | 'Succeeded' | 'Failed';
  /** CPU seconds per second of its one container. */
  cpu: number;
  memoryWorkingSet: number;
  memoryUsage: number;
  /** Bytes per second received and transmitted (each) on its `eth0`; absent: no network series. */
  networkBytes?: number;
}

export interface NamespaceSpec {
  name: string;
  workspace: string;
}

export interface ClusterData {
  nodes: NodeSpec[];
  pods: PodSpec[];
  namespaces: NamespaceSpec[];
  /** The kube-apiserver's and kube-scheduler's own series (the cluster overview's Kubernetes status); absent: none. */
  controlPlane?: ControlPlaneSpec;
  /** First and last sample (Unix seconds) and the spacing. */
  start: number;
  end: number;
  intervalSeconds: number;
}

export interface ControlPlaneSpec {
  /** Requests per second the kube-apiserver serves (all `GET`), and the seconds each takes. */
  apiserverRequestsPerSecond: number;
  apiserverLatencySeconds: number;
  /** The kube-scheduler's attempts so far, by result (constant over the range). */
  scheduled: number;
  scheduleErrors: number;
}

/** The namespace of the node_exporter pods (one per node). */
export const EXPORTER_NAMESPACE = 'monitoring-system';

const labels = (l: Record<string, string>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(',')}}`;

/** The series of the cluster over its time range, as one OpenMetrics text ending `# EOF`. */
export function clusterOpenMetrics(cluster: ClusterData): string {
  const families = new Map<string, { type: string; lines: string[] }>();
  const times: number[] = [];
  for (let t = cluster.start; t <= cluster.end; t += cluster.intervalSeconds) times.push(t);
  const add = (
    name: string,
    type: 'gauge' | 'counter',
    l: Record<string, string>,
    value: (t: number, i: number) => number,
  ) => {
    let family = families.get(name);
    if (!family) families.set(name, (family = { type, lines: [] }));
    const sample = type === 'counter' ? `${name}_total` : name;
    const series = `${sample}${labels(l)}`;
    times.forEach((t, i) => family.lines.push(`${series} ${value(t, i)} ${t}`));
  };
  const step = cluster.intervalSeconds;
  const ksm = { job: 'kube-state-metrics' };

  for (const node of cluster.nodes) {
    const exporter = {
      job: 'node-exporter',
      namespace: EXPORTER_NAMESPACE,
      pod: `node-exporter-${node.name}`,
    };
    for (let cpu = 0; cpu < node.cpus; cpu++) {
      add(
        'node_cpu_seconds',
        'counter',
        { ...exporter, cpu: String(cpu), mode: 'user' },
        (_, i) => i * step * node.busy,
      );
      add(
        'node_cpu_seconds',
        'counter',
        { ...exporter, cpu: String(cpu), mode: 'idle' },
        (_, i) => i * step * (1 - node.busy),
      );
    }
    add('node_memory_MemTotal_bytes', 'gauge', exporter, () => node.memoryTotal);
    add('node_memory_MemFree_bytes', 'gauge', exporter, () => node.memoryAvailable);
    for (const part of ['Cached', 'Buffers', 'SReclaimable'])
      add(`node_memory_${part}_bytes`, 'gauge', exporter, () => 0);
    if (node.io) addNodeIo(add, step, exporter, node.name, node.io);
    add(
      'kube_pod_info',
      'gauge',
      { ...ksm, namespace: EXPORTER_NAMESPACE, pod: exporter.pod, node: node.name, host_ip: '10.0.0.1' },
      () => 1,
    );
    add(
      'kube_node_status_capacity',
      'gauge',
      { ...ksm, node: node.name, resource: 'pods', unit: 'integer' },
      () => node.podCapacity,
    );
    add(
      'kube_node_status_condition',
      'gauge',
      { ...ksm, node: node.name, condition: 'Ready', status: 'true' },
      () => 1,
    );
  }
  for (const ns of cluster.namespaces)
    add('kube_namespace_labels', 'gauge', { ...ksm, namespace: ns.name, workspace: ns.workspace }, () => 1);
  for (const pod of cluster.pods) {
    const id = { namespace: pod.namespace, pod: pod.name };
    add('kube_pod_info', 'gauge', { ...ksm, ...id, node: pod.node, host_ip: '10.0.0.1' }, () => 1);
    add(
      'kube_pod_owner',
      'gauge',
      { ...ksm, ...id, owner_kind: pod.ownerKind, owner_name: pod.ownerName },
      () => 1,
    );
    for (const phase of ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'])
      add('kube_pod_status_phase', 'gauge', { ...ksm, ...id, phase }, () => (phase === pod.phase ? 1 : 0));
    const container = { job: 'kubelet', ...id, container: 'main', image: 'registry.example/app:1' };
    add('container_cpu_usage_seconds', 'counter', container, (_, i) => i * step * pod.cpu);
    add('container_memory_working_set_bytes', 'gauge', container, () => pod.memoryWorkingSet);
    add('container_memory_usage_bytes', 'gauge', container, () => pod.memoryUsage);
    const perSecond = pod.networkBytes;
    if (perSecond !== undefined)
      for (const way of ['receive', 'transmit'])
        add(
          `container_network_${way}_bytes`,
          'counter',
          { job: 'kubelet', ...id, interface: 'eth0' },
          (_, i) => i * step * perSecond,
        );
  }

  if (cluster.controlPlane) addControlPlane(add, step, cluster.controlPlane);

  const out: string[] = [];
  for (const [name, family] of families) {
    out.push(`# TYPE ${name} ${family.type}`);
    // OpenMetrics wants each series' samples together and in time order: they are, series by series.
    out.push(...family.lines);
  }
  out.push('# EOF', '');
  return out.join('\n');
}

type AddSeries = (
  name: string,
  type: 'gauge' | 'counter',
  l: Record<string, string>,
  value: (t: number, i: number) => number,
) => void;

/** A node's disk (one device, with `instance` as the cluster-wide disk sums group by it), load and traffic. */
function addNodeIo(
  add: AddSeries,
  step: number,
  exporter: Record<string, string>,
  node: string,
  io: NodeIo,
): void {
  const disk = { ...exporter, instance: `${node}:9100`, device: '/dev/sda1', mountpoint: '/' };
  add('node_filesystem_size_bytes', 'gauge', disk, () => io.diskSize);
  add('node_filesystem_avail_bytes', 'gauge', disk, () => io.diskAvailable);
  add('node_filesystem_files', 'gauge', disk, () => io.inodes);
  add('node_filesystem_files_free', 'gauge', disk, () => io.inodesFree);
  for (const window of ['1', '5', '15']) add(`node_load${window}`, 'gauge', exporter, () => io.load);
  const device = { ...exporter, device: 'sda' };
  for (const ops of ['reads_completed', 'writes_completed'])
    add(`node_disk_${ops}`, 'counter', device, (_, i) => i * step * io.diskOps);
  for (const bytes of ['read_bytes', 'written_bytes'])
    add(`node_disk_${bytes}`, 'counter', device, (_, i) => i * step * io.diskBytes);
  for (const way of ['receive', 'transmit'])
    add(
      `node_network_${way}_bytes`,
      'counter',
      { ...exporter, device: 'eth0' },
      (_, i) => i * step * io.networkBytes,
    );
}

/** The kube-apiserver's request counter and duration (its histogram's sum and count) and the scheduler's attempts. */
function addControlPlane(add: AddSeries, step: number, spec: ControlPlaneSpec): void {
  const apiserver = { job: 'apiserver', verb: 'GET', resource: 'pods' };
  const rps = spec.apiserverRequestsPerSecond;
  add('apiserver_request', 'counter', { ...apiserver, code: '200' }, (_, i) => i * step * rps);
  // A histogram's _sum and _count, written as plain series (the rules read only these two).
  add(
    'apiserver_request_duration_seconds_sum',
    'gauge',
    apiserver,
    (_, i) => i * step * rps * spec.apiserverLatencySeconds,
  );
  add('apiserver_request_duration_seconds_count', 'gauge', apiserver, (_, i) => i * step * rps);
  for (const job of ['apiserver', 'kube-scheduler']) add('up', 'gauge', { job }, () => 1);
  const scheduler = { job: 'kube-scheduler', profile: 'default-scheduler' };
  add('scheduler_schedule_attempts', 'counter', { ...scheduler, result: 'scheduled' }, () => spec.scheduled);
  add('scheduler_schedule_attempts', 'counter', { ...scheduler, result: 'error' }, () => spec.scheduleErrors);
}
