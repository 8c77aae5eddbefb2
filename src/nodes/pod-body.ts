import { deflateRawSync, inflateRawSync, constants as zlibConstants } from 'node:zlib';

/**
 * A pod as the resources API serves it (`kind` and `apiVersion` first, no managedFields), kept by the
 * pod cache as raw DEFLATE against a preset dictionary: pods share most of their text (field names,
 * the defaults the kube-apiserver fills in), so a pod of 3–4 kB keeps well under one (716 bytes for the
 * benchmarks' pods, whose hashes and IPs do not compress). The bytes are held as a one-byte string
 * (latin1), which V8 stores flat in its heap: no Buffer object and backing store per pod.
 * docs/resources-api.md has the measured cost.
 */

/**
 * What most pods say, as the kube-apiserver writes it: the dictionary DEFLATE refers back to. Ordered
 * from the rarer text to the most common, as zlib advises (nearer the end is cheaper to refer to).
 */
const DICTIONARY = Buffer.from(
  JSON.stringify({
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      generateName: '',
      labels: {
        app: '',
        'app.kubernetes.io/name': '',
        'pod-template-hash': '',
        'controller-revision-hash': '',
      },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '', 'prometheus.io/scrape': 'true' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: '',
          uid: '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      volumes: [
        {
          name: 'kube-api-access-',
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [
                    { path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
                  ],
                },
              },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [
        {
          name: '',
          image: '',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [{ name: '', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
          resources: { limits: { cpu: '', memory: '' }, requests: { cpu: '', memory: '' } },
          volumeMounts: [
            {
              name: 'kube-api-access-',
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
          livenessProbe: {
            httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' },
            timeoutSeconds: 1,
            periodSeconds: 10,
            successThreshold: 1,
            failureThreshold: 3,
          },
          readinessProbe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' } },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: '',
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodReadyToStartContainers', status: 'True', lastProbeTime: null, lastTransitionTime: '' },
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: '' },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '' },
        { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: '' },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '' },
      ],
      hostIP: '',
      hostIPs: [{ ip: '' }],
      podIP: '',
      podIPs: [{ ip: '' }],
      startTime: '',
      containerStatuses: [
        {
          name: '',
          state: { running: { startedAt: '' } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: '',
          imageID: '',
          containerID: 'containerd://',
          started: true,
        },
      ],
      qosClass: 'Burstable',
    },
  }),
);

/** Level 1: a pod is small, and the dictionary does most of the work; the cache packs every pod at start. */
const DEFLATE_OPTIONS = { level: zlibConstants.Z_BEST_SPEED, dictionary: DICTIONARY };
const INFLATE_OPTIONS = { dictionary: DICTIONARY };

/** The pod's served JSON, packed for the cache. */
export function packPod(pod: object): string {
  const { managedFields: _dropped, ...metadata } =
    (pod as { metadata?: Record<string, unknown> }).metadata ?? {};
  const served = { kind: 'Pod', apiVersion: 'v1', ...pod, metadata };
  return deflateRawSync(Buffer.from(JSON.stringify(served)), DEFLATE_OPTIONS).toString('latin1');
}

/** The served JSON bytes of a packed pod. */
export function unpackPod(packed: string): Buffer {
  return inflateRawSync(Buffer.from(packed, 'latin1'), INFLATE_OPTIONS);
}
