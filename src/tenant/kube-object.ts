/** The parts of a Kubernetes object the tenant API reads; everything else is served as the kube-apiserver sent it. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

export interface KubeList<T> {
  items: T[];
}
