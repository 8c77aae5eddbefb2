# Shared settings of the end-to-end tests' one-node cluster (sourced by up.sh and down.sh).
# One cluster per machine at a time (a lock in run.sh): names, addresses and ports are fixed.

# Everything the cluster writes at run time (certificates, etcd data, containerd's store, the kubelet's
# root, logs). Removed by down.sh.
E2E_STATE="${E2E_STATE:-/var/tmp/platform-apiserver-e2e}"
# The node's network: a bridge made by up.sh, which the CNI bridge plugin then uses for the Pods. The
# node's address is the bridge's, so the kube-apiserver and the kubelet are reachable from the Pods and
# nothing of the cluster listens on the machine's own interfaces.
E2E_BRIDGE=pae2e0
E2E_NODE_IP=10.214.0.1
E2E_POD_CIDR=10.214.0.0/24
E2E_SERVICE_CIDR=10.215.0.0/24
E2E_NODE_NAME=pa-e2e-node
E2E_APISERVER_PORT=6443
# containerd's namespace for the CRI (what the kubelet sees).
E2E_CTR_NS=k8s.io
E2E_SOCK="$E2E_STATE/containerd/containerd.sock"

e2e_log() { printf '[e2e-cluster] %s\n' "$*" >&2; }
