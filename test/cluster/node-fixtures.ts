import type { CoreV1Api, V1Node } from '@kubernetes/client-node';

export interface NodeFixtureOptions {
  /** Prefix of generated names: <prefix>-<index, zero-padded>. */
  prefix?: string;
  /** Fixed base time for creation-like fields, so fixtures are deterministic. */
  baseTime?: Date;
}

const ROLES = ['control-plane', 'worker', 'worker', 'worker', 'edge'] as const;
const ZONES = ['zone-a', 'zone-b', 'zone-c'] as const;

/**
 * A realistic Node as a kubelet would report it: role labels with empty values, annotations whose
 * values are JSON text, capacity/allocatable, conditions, addresses, nodeInfo, images and taints.
 * Index-dependent variety gives filters something to find: every 7th node is unschedulable, every
 * 11th is NotReady, every 13th has memory pressure.
 */
export function nodeFixture(index: number, options: NodeFixtureOptions = {}): V1Node {
  const prefix = options.prefix ?? 'node';
  const name = `${prefix}-${String(index).padStart(4, '0')}`;
  const role = ROLES[index % ROLES.length]!;
  const zone = ZONES[index % ZONES.length]!;
  const base = (options.baseTime ?? new Date('2026-01-01T00:00:00Z')).getTime();
  // Whole seconds: the API stores RFC 3339 times at second precision.
  const heartbeat = new Date(base + index * 1000);
  const ready = index % 11 !== 10;
  const memoryPressure = index % 13 === 12;
  const unschedulable = index % 7 === 6;
  const ip = `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;

  const taints = [
    ...(role === 'control-plane'
      ? [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]
      : []),
    ...(unschedulable
      ? [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: heartbeat }]
      : []),
  ];

  const condition = (type: string, status: boolean, reason: string, message: string) => ({
    type,
    status: status ? 'True' : 'False',
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: heartbeat,
    reason,
    message,
  });

  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': index % 4 === 3 ? 'arm64' : 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'topology.kubernetes.io/zone': zone,
        [`node-role.kubernetes.io/${role}`]: '',
        ...(role === 'control-plane' ? { 'node-role.kubernetes.io/master': '' } : {}),
        'node.platform.io/pool': index % 2 === 0 ? 'general' : 'batch',
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'csi.example.com': name }),
        'projectcalico.org/IPv4Address': `${ip}/16`,
        'platform.io/labels': JSON.stringify({ zone, pool: index % 2 === 0 ? 'general' : 'batch' }),
      },
    },
    spec: {
      podCIDR: `10.244.${index % 256}.0/24`,
      podCIDRs: [`10.244.${index % 256}.0/24`],
      ...(unschedulable ? { unschedulable: true } : {}),
      ...(taints.length > 0 ? { taints } : {}),
    },
    status: {
      capacity: {
        cpu: String(4 + (index % 4) * 4),
        memory: `${16 + (index % 4) * 16}Gi`,
        pods: '110',
        'ephemeral-storage': '100Gi',
      },
      allocatable: {
        cpu: `${(4 + (index % 4) * 4) * 1000 - 100}m`,
        memory: `${(16 + (index % 4) * 16) * 1024 - 512}Mi`,
        pods: '110',
        'ephemeral-storage': '92Gi',
      },
      conditions: [
        condition(
          'MemoryPressure',
          memoryPressure,
          memoryPressure ? 'KubeletHasInsufficientMemory' : 'KubeletHasSufficientMemory',
          memoryPressure
            ? 'kubelet has insufficient memory available'
            : 'kubelet has sufficient memory available',
        ),
        condition('DiskPressure', false, 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', false, 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition(
          'Ready',
          ready,
          ready ? 'KubeletReady' : 'KubeletNotReady',
          ready ? 'kubelet is posting ready status' : 'container runtime network not ready',
        ),
      ],
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: `${index.toString(16).padStart(32, '0')}`,
        systemUUID: `00000000-0000-0000-0000-${index.toString(16).padStart(12, '0')}`,
        bootID: `b0000000-0000-0000-0000-${index.toString(16).padStart(12, '0')}`,
        kernelVersion: '6.1.0-27-amd64',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://2.1.4',
        kubeletVersion: 'v1.36.3',
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: index % 4 === 3 ? 'arm64' : 'amd64',
      },
      images: [
        {
          names: [
            'registry.example/platform/apiserver@sha256:' + 'a'.repeat(64),
            'registry.example/platform/apiserver:v0.1.0',
          ],
          sizeBytes: 61_234_567,
        },
        { names: ['registry.example/pause:3.10'], sizeBytes: 320_368 },
      ],
    },
  };
}

/** Creates `count` fixture nodes through the API (status set on create), `concurrency` requests at a time. */
export async function createNodes(
  core: CoreV1Api,
  count: number,
  options: NodeFixtureOptions & { concurrency?: number; startIndex?: number } = {},
): Promise<string[]> {
  const start = options.startIndex ?? 0;
  const concurrency = options.concurrency ?? 16;
  const names: string[] = [];
  let next = start;
  const worker = async () => {
    while (next < start + count) {
      const node = nodeFixture(next++, options);
      await core.createNode({ body: node });
      names.push(node.metadata!.name!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return names.sort();
}

/** Deletes every node whose name starts with `<prefix>-`. */
export async function deleteNodes(core: CoreV1Api, prefix = 'node'): Promise<void> {
  const list = await core.listNode();
  await Promise.all(
    list.items
      .filter((n) => n.metadata?.name?.startsWith(`${prefix}-`))
      .map((n) => core.deleteNode({ name: n.metadata!.name! })),
  );
}
