/**
 * A Kubernetes object as the kube-apiserver sends it (JSON, timestamps as text). Only the metadata the
 * query pipeline reads is typed; kind-specific code reads `spec`/`status` through the helpers below.
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: readonly { uid?: string; kind?: string }[];
  managedFields?: unknown;
  [field: string]: unknown;
}

/** A list as the kube-apiserver sends it. */
export interface KubeList {
  metadata?: { resourceVersion?: string; continue?: string };
  items: KubeObject[];
}

export type Json = Record<string, unknown>;

/** `object.a.b.c` if every step is an object, else undefined. */
export function field(object: unknown, ...path: string[]): unknown {
  let at = object;
  for (const step of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Json)[step];
  }
  return at;
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Milliseconds since the epoch of an RFC 3339 timestamp; 0 when absent or malformed. */
export function timeMs(value: unknown): number {
  if (typeof value !== 'string') return 0;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? 0 : ms;
}

export function creationMs(object: KubeObject): number {
  return timeMs(object.metadata?.creationTimestamp);
}

export function nameOf(object: KubeObject): string {
  return object.metadata?.name ?? '';
}
