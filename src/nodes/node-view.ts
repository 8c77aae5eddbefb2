import { createHash, randomUUID } from 'node:crypto';
import {
  allocationMembers,
  allocationPrefix,
  NO_ALLOCATION,
  type Allocatable,
  type NodeAllocation,
} from './node-allocation.ts';
import { nodeStatusOf, type NodeLike, type NodeStatus } from './node-status.ts';
import { milliValue, unitValue } from './quantity.ts';

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
  status?: {
    allocatable?: Record<string, string>;
    conditions?: readonly { type?: string; status?: string; lastTransitionTime?: string }[];
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/**
 * What the node list needs of one node at one resourceVersion and one allocation, computed once when
 * the node's or its pods' event arrives: the sort keys, labels and annotations for selectors, the
 * status class for `?status=`, and the item's response bytes. Entries are frozen: the cache shares
 * them with every request and never changes them.
 */
export interface NodeEntry {
  readonly name: string;
  readonly uid: string;
  readonly creationMs: number;
  /** `lastUpdateTimestamp`: the latest condition transition, else the creation time. */
  readonly updatedMs: number;
  readonly resourceVersion: string;
  readonly labels: Readonly<Record<string, string>> | undefined;
  /** The node's own annotations (not the allocation annotations this server adds). */
  readonly annotations: Readonly<Record<string, string>> | undefined;
  readonly status: NodeStatus;
  readonly allocatable: Allocatable;
  /** The allocation annotations are bytes [start, end) of `json`, so a pod change splices only them. */
  readonly allocationStart: number;
  readonly allocationEnd: number;
  /** ETag of the single GET: the resourceVersion plus a digest of the allocation annotations. */
  readonly etag: string;
  /** `{"kind":"Node","apiVersion":"v1","metadata":{…selfLink…},"spec":…,"status":…}` */
  readonly json: Buffer;
}

/** Which annotations the entry carries: their prefix (`node.<platform>.io/`) and the node's sums. */
export interface AllocationView {
  prefix: string;
  sums: NodeAllocation;
}

const DEFAULT_VIEW: AllocationView = { prefix: allocationPrefix('platform'), sums: NO_ALLOCATION };

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

// Stands in for the allocation annotations while the node is serialised; a random key cannot collide.
const MARKER_KEY = `\u0000allocation-${randomUUID()}`;
const MARKER_TEXT = `${JSON.stringify(MARKER_KEY)}:0`;

/** The served view with a marker as the last annotation, where the allocation annotations go. */
function viewWithMarker(node: RawNode, prefix: string): Record<string, unknown> {
  const view = nodeView(node);
  const metadata = view['metadata'] as Record<string, unknown>;
  const annotations: Record<string, unknown> = {};
  // Ours win over annotations of the same name someone put on the Node.
  for (const [key, value] of Object.entries(node.metadata?.annotations ?? {})) {
    if (!key.startsWith(prefix)) annotations[key] = value;
  }
  annotations[MARKER_KEY] = 0;
  if (node.metadata?.annotations !== undefined) {
    metadata['annotations'] = annotations;
    return view;
  }
  // No annotations on the Node: add the map where the kube-apiserver would put it, after labels.
  const withAnnotations: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    withAnnotations[key] = value;
    if (key === 'labels') withAnnotations['annotations'] = annotations;
  }
  if (!('annotations' in withAnnotations)) withAnnotations['annotations'] = annotations;
  return { ...view, metadata: withAnnotations };
}

function digest(text: string): string {
  return createHash('sha1').update(text).digest('base64url').slice(0, 12);
}

function latestTransitionMs(node: RawNode): number | undefined {
  let latest: number | undefined;
  for (const condition of node.status?.conditions ?? []) {
    const ms = Date.parse(condition.lastTransitionTime ?? '');
    if (!Number.isNaN(ms) && (latest === undefined || ms > latest)) latest = ms;
  }
  return latest;
}

export function nodeEntry(node: RawNode, allocation: AllocationView = DEFAULT_VIEW): NodeEntry {
  const name = node.metadata?.name;
  if (!name) throw new Error('node without metadata.name');
  const created = Date.parse(node.metadata?.creationTimestamp ?? '');
  const creationMs = Number.isNaN(created) ? 0 : created;
  const allocatable: Allocatable = {
    cpu: milliValue(node.status?.allocatable?.['cpu'] ?? '0') ?? 0,
    memory: unitValue(node.status?.allocatable?.['memory'] ?? '0') ?? 0,
  };
  const text = JSON.stringify(viewWithMarker(node, allocation.prefix));
  const at = text.indexOf(MARKER_TEXT);
  const members = allocationMembers(allocation.prefix, allocation.sums, allocatable);
  const head = Buffer.from(text.slice(0, at));
  const resourceVersion = node.metadata?.resourceVersion ?? '';
  return Object.freeze({
    name,
    uid: node.metadata?.uid ?? '',
    creationMs,
    updatedMs: latestTransitionMs(node) ?? creationMs,
    resourceVersion,
    labels: node.metadata?.labels,
    annotations: node.metadata?.annotations,
    status: nodeStatusOf(node),
    allocatable: Object.freeze(allocatable),
    allocationStart: head.length,
    allocationEnd: head.length + Buffer.byteLength(members),
    etag: `W/"${resourceVersion}.${digest(members)}"`,
    json: Buffer.concat([head, Buffer.from(members), Buffer.from(text.slice(at + MARKER_TEXT.length))]),
  });
}

/**
 * The same node with other allocation sums: only the annotation bytes are replaced (the rest of the
 * node's JSON is copied, never re-serialised). Returns `entry` itself when nothing changes.
 */
export function withAllocation(entry: NodeEntry, allocation: AllocationView): NodeEntry {
  const members = allocationMembers(allocation.prefix, allocation.sums, entry.allocatable);
  const bytes = Buffer.from(members);
  if (bytes.equals(entry.json.subarray(entry.allocationStart, entry.allocationEnd))) return entry;
  return Object.freeze({
    ...entry,
    allocationEnd: entry.allocationStart + bytes.length,
    etag: `W/"${entry.resourceVersion}.${digest(members)}"`,
    json: Buffer.concat([
      entry.json.subarray(0, entry.allocationStart),
      bytes,
      entry.json.subarray(entry.allocationEnd),
    ]),
  });
}
