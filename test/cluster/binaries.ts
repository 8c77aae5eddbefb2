import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ControlPlaneBinaries {
  kubeApiserver: string;
  etcd: string;
  kubectl: string;
  kubeVersion: string;
  /** helm v3, for the chart tests. */
  helm: string;
}

const script = fileURLToPath(new URL('./build-binaries.sh', import.meta.url));

/**
 * Paths of the pinned kube-apiserver, etcd, kubectl and helm, building them from the Go module proxy if
 * they are not cached yet. Throws (never skips) when Go is missing or a build fails.
 */
export function controlPlaneBinaries(): ControlPlaneBinaries {
  let out: string;
  try {
    out = execFileSync('bash', [script, '--print-paths'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (err) {
    throw new Error(`cannot build the control-plane binaries (${script}): ${(err as Error).message}`, {
      cause: err,
    });
  }
  const paths = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((line) => line.split('=') as [string, string]),
  );
  const { KUBE_APISERVER, ETCD, KUBECTL, KUBE_VERSION, HELM } = paths;
  if (!KUBE_APISERVER || !ETCD || !KUBECTL || !KUBE_VERSION || !HELM)
    throw new Error(`unexpected output of ${script}: ${out}`);
  return {
    kubeApiserver: KUBE_APISERVER,
    etcd: ETCD,
    kubectl: KUBECTL,
    kubeVersion: KUBE_VERSION,
    helm: HELM,
  };
}
