import { nodeStatusOf, type NodeLike, type NodeStatus } from './node-status.ts';

/** A Node as the kube-apiserver sends it (JSON, timestamps as text). Only what we read is typed. */
export interface RawNode extends NodeLike {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    managedFields?: unknown;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/**
 * What the node list needs of one node at one resourceVersion, computed once when the event arrives:
 * the sort keys, the labels for selectors, the status class for `?status=`, and the item's response
 * bytes. Entries are frozen: the cache shares them with every request and never changes them.
 */
export interface NodeEntry {
  readonly name: string;
  readonly creationMs: number;
  readonly resourceVersion: string;
  readonly labels: Readonly<Record<string, string>> | undefined;
  readonly status: NodeStatus;
  /** `{"kind":"Node","apiVersion":"v1","metadata":{…selfLink…},"spec":…,"status":…}` */
  readonly json: Buffer;
}

export function selfLinkOf(name: string): string {
  return `/api/v1/nodes/${encodeURIComponent(name)}`;
}

/**
 * The served form of a node: TypeMeta first (LIST items lack it), `selfLink` filled where the
 * kube-apiserver would put it, no managedFields, everything else verbatim. Builds new objects;
 * the input is not touched.
 */
export function nodeView(node: RawNode): Record<string, unknown> {
  const { name, namespace, ...restOfMetadata } = node.metadata ?? {};
  const metadata: Record<string, unknown> = { name };
  if (namespace !== undefined) metadata['namespace'] = namespace;
  metadata['selfLink'] = selfLinkOf(String(name ?? ''));
  for (const [key, value] of Object.entries(restOfMetadata)) {
    if (key !== 'managedFields' && key !== 'selfLink') metadata[key] = value;
  }
  const { apiVersion: _a, kind: _k, metadata: _m, ...body } = node;
  return { kind: 'Node', apiVersion: 'v1', metadata, ...body };
}

export function nodeEntry(node: RawNode): NodeEntry {
  const name = node.metadata?.name;
  if (!name) throw new Error('node without metadata.name');
  const created = Date.parse(node.metadata?.creationTimestamp ?? '');
  return Object.freeze({
    name,
    creationMs: Number.isNaN(created) ? 0 : created,
    resourceVersion: node.metadata?.resourceVersion ?? '',
    labels: node.metadata?.labels,
    status: nodeStatusOf(node),
    json: Buffer.from(JSON.stringify(nodeView(node))),
  });
}
