import type { KubeConfig } from '@kubernetes/client-node';
import { kubeRequest, KubeRequestError } from '../cluster/kube-request.ts';

/** The fields of a `coordination.k8s.io/v1` Lease that leader election reads and writes. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string; [field: string]: unknown };
  spec: LeaseSpec;
}

/** One Lease object, read and written with compare-and-swap on its resourceVersion. */
export interface LeaseStore {
  readonly description: string;
  /** The lease, or undefined when it does not exist. */
  get(): Promise<Lease | undefined>;
  /** Creates it; undefined when someone else created it first. */
  create(spec: LeaseSpec): Promise<Lease | undefined>;
  /** Replaces it if it is still at `current`'s resourceVersion; undefined when it changed meanwhile. */
  replace(current: Lease, spec: LeaseSpec): Promise<Lease | undefined>;
}

/** The Lease `namespace/name` through the kube-apiserver. Every call is bounded by `timeoutMs`. */
export function kubeLeaseStore(
  kc: KubeConfig,
  namespace: string,
  name: string,
  timeoutMs: number,
): LeaseStore {
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const path = `${collection}/${encodeURIComponent(name)}`;
  const body = (spec: LeaseSpec, resourceVersion?: string): Lease => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, ...(resourceVersion ? { resourceVersion } : {}) },
    spec,
  });
  const unlessStatus = async (status: number, request: () => Promise<Lease>): Promise<Lease | undefined> => {
    try {
      return await request();
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === status) return undefined;
      throw err;
    }
  };
  return {
    description: `${namespace}/${name}`,
    get: () => unlessStatus(404, () => kubeRequest<Lease>(kc, path, { timeoutMs })),
    create: (spec) =>
      unlessStatus(409, () =>
        kubeRequest<Lease>(kc, collection, { method: 'POST', body: body(spec), timeoutMs }),
      ),
    replace: (current, spec) =>
      unlessStatus(409, () =>
        kubeRequest<Lease>(kc, path, {
          method: 'PUT',
          body: body(spec, current.metadata.resourceVersion),
          timeoutMs,
        }),
      ),
  };
}

/** A Lease time (`MicroTime`: RFC 3339 with exactly six fractional digits). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
