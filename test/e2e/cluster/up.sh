#!/usr/bin/env bash
# Starts the end-to-end tests' one-node cluster: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, containerd (CRI) + runc, the CNI bridge, kube-proxy, a kubelet that registers a real
# Node, kube-router enforcing NetworkPolicy (firewall-only mode), Traefik as the Ingress controller
# (host processes watching the API), and the monitoring API's sources: Prometheus scraping the kubelet
# (cAdvisor, resource metrics), kube-state-metrics and node_exporter (a Pod on the node), with the
# chart's recording rules. Images are imported
# from archives built here (the app image from scripts/build-image.sh, the pause image below).
#
#   test/e2e/cluster/up.sh IMAGE ARCHIVE    writes $E2E_STATE/env (KEY=value lines) when the Node is Ready
#
# Adapted to this machine (see docs/testing.md): cgroupfs driver on cgroup v1, runc as the only runtime,
# no resource limit raised in any container, no cluster DNS, everything on a bridge of its own.
# Stop with down.sh (run.sh always does, also on failure).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

app_image="$1"
app_archive="$2"

eval "$(bash "$repo/test/cluster/build-binaries.sh" --print-paths)"
eval "$(bash "$here/build-node-binaries.sh" --print-paths)"
PROMETHEUS="$(bash "$repo/test/tools/build-prometheus.sh")"
cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"

for tool in containerd runc ctr iptables iptables-save ipset conntrack openssl buildah gcc; do
  command -v "$tool" >/dev/null 2>&1 || { e2e_log "ERROR: $tool is missing (run: bash test/e2e/install-packages.sh)"; exit 2; }
done
[ -x /usr/lib/cni/bridge ] || { e2e_log "ERROR: the CNI plugins are missing (run: bash test/e2e/install-packages.sh)"; exit 2; }

mkdir -p "$E2E_STATE"/{pids,logs,pki,etcd,containerd,kubelet,cni/net.d,cni/cache}
# The run that started this cluster (.ci/run sets it), so that run alone reaps what it leaves behind.
[ -z "${PLATFORM_RUN_ID:-}" ] || echo "$PLATFORM_RUN_ID" >"$E2E_STATE/run-id"
pids="$E2E_STATE/pids"
logs="$E2E_STATE/logs"
pki="$E2E_STATE/pki"

# What down.sh must restore or must leave alone.
ip netns list 2>/dev/null | awk '{print $1}' >"$E2E_STATE/netns-before"
ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 >"$E2E_STATE/veths-before"
for key in net.ipv4.ip_forward net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables; do
  echo "$key $(sysctl -n "$key")" >>"$E2E_STATE/sysctl-before"
done

start() { # name command...: runs in the background, output to logs/<name>.log, PID to pids/<name>.pid
  local name="$1"
  shift
  nice "$@" >"$logs/$name.log" 2>&1 3>&- &
  echo $! >"$pids/$name.pid"
}
# Fails the whole script (also from inside wait_until's silenced checks: fd 3 is the real stderr).
exec 3>&2
alive() { kill -0 "$(cat "$pids/$1.pid")" 2>/dev/null || { e2e_log "ERROR: $1 exited; last lines of its log:" 2>&3; tail -30 "$logs/$1.log" >&3; exit 1; }; }
wait_until() { # description seconds command...: polls every 0.5 s until the command succeeds
  local what="$1" seconds="$2"
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || { e2e_log "ERROR: timed out after ${seconds}s waiting for $what"; return 1; }
    sleep 0.5
  done
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- network: the node's bridge ---------------------------------------------------------------------------
ip link add "$E2E_BRIDGE" type bridge
ip addr add "$E2E_NODE_IP/24" dev "$E2E_BRIDGE"
ip link set "$E2E_BRIDGE" up
# Service addresses only exist as kube-proxy's DNAT rules; without a rule, a packet to one goes nowhere
# (never out of the machine).
ip route add blackhole "$E2E_SERVICE_CIDR"
# The bridge plugin turns on IP forwarding for the Pods' gateway; the Pods may reach the node and each
# other, never beyond the bridge. In the mangle table, which runs before the filter table: kube-router
# accepts the Pods' traffic that its policies allow at the head of the filter table's FORWARD chain (and
# keeps its jump first there), so a rule of ours in that chain would never be reached.
iptables -t mangle -N PA-E2E-FORWARD
iptables -t mangle -A PA-E2E-FORWARD -s "$E2E_POD_CIDR" ! -o "$E2E_BRIDGE" -j DROP
iptables -t mangle -I FORWARD 1 -j PA-E2E-FORWARD
sysctl -qw net.bridge.bridge-nf-call-iptables=1

# --- credentials ------------------------------------------------------------------------------------------
admin_token="$(openssl rand -hex 24)"
echo "$admin_token,e2e-admin,e2e-admin,system:masters" >"$pki/tokens.csv"
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null

# --- etcd + kube-apiserver ----------------------------------------------------------------------------------
etcd_client="$(free_port)"
etcd_peer="$(free_port)"
start etcd "$ETCD" --name=e2e --data-dir="$E2E_STATE/etcd" \
  --listen-client-urls="http://127.0.0.1:$etcd_client" --advertise-client-urls="http://127.0.0.1:$etcd_client" \
  --listen-peer-urls="http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer" \
  --initial-cluster="e2e=http://127.0.0.1:$etcd_peer" --unsafe-no-fsync --log-level=warn

apiserver="https://$E2E_NODE_IP:$E2E_APISERVER_PORT"
start kube-apiserver "$KUBE_APISERVER" \
  --etcd-servers="http://127.0.0.1:$etcd_client" \
  --bind-address="$E2E_NODE_IP" --advertise-address="$E2E_NODE_IP" --secure-port="$E2E_APISERVER_PORT" \
  --cert-dir="$pki/apiserver" --token-auth-file="$pki/tokens.csv" \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --service-cluster-ip-range="$E2E_SERVICE_CIDR" --authorization-mode=RBAC --allow-privileged=true \
  --kubelet-preferred-address-types=InternalIP --profiling=false --v=1
ca="$pki/apiserver/apiserver.crt"
wait_until "the kube-apiserver's certificate" 60 test -s "$ca"
ready() { alive "$1"; curl -fsS --cacert "$ca" -H "Authorization: Bearer $admin_token" "$apiserver/readyz"; }
wait_until "the kube-apiserver" 120 ready kube-apiserver

kubeconfig="$E2E_STATE/admin.kubeconfig"
cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: e2e
    cluster: {server: "$apiserver", certificate-authority: "$ca"}
users:
  - name: e2e-admin
    user: {token: "$admin_token"}
contexts:
  - name: e2e
    context: {cluster: e2e, user: e2e-admin}
current-context: e2e
EOF
chmod 600 "$kubeconfig"

# --- controllers --------------------------------------------------------------------------------------------
# --root-ca-file: the kube-root-ca.crt ConfigMap every Pod's projected ServiceAccount volume needs.
start kube-controller-manager "$KUBE_CONTROLLER_MANAGER" --kubeconfig="$kubeconfig" \
  --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
  --root-ca-file="$ca" --service-account-private-key-file="$pki/sa.key" --leader-elect=false \
  --bind-address=127.0.0.1 --secure-port="$(free_port)" --cluster-cidr="$E2E_POD_CIDR" --allocate-node-cidrs=false \
  --controllers='*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route,-persistentvolume-binder' \
  --node-monitor-grace-period=20s --v=1
start kube-scheduler "$KUBE_SCHEDULER" --kubeconfig="$kubeconfig" \
  --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig" \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" --v=1

# --- the pause image (built here: no registry is reachable) ------------------------------------------------
pause_key="$(sha256sum "$here/pause/pause.c" | cut -c1-16)"
pause_image="docker.io/library/platform-e2e-pause:$pause_key"
pause_archive="$cache_root/images/pause-$pause_key.tar"
if [ ! -f "$pause_archive" ]; then
  e2e_log "building the pause image $pause_image"
  store="$cache_root/containers"
  bah() { buildah --root "$store/storage" --runroot "$store/run" --storage-driver overlay "$@"; }
  work="$(mktemp -d)"
  gcc -static -Os -s -o "$work/pause" "$here/pause/pause.c"
  ctr_id="$(bah from --pull=never scratch)"
  bah copy --quiet "$ctr_id" "$work/pause" /pause >/dev/null
  bah config --entrypoint '["/pause"]' --user 65535:65535 "$ctr_id"
  bah commit --quiet --rm "$ctr_id" "$pause_image" >/dev/null
  mkdir -p "$cache_root/images"
  bah push --quiet "$pause_image" "docker-archive:$pause_archive.tmp:$pause_image" >&2
  mv "$pause_archive.tmp" "$pause_archive"
  rm -rf "$work"
fi

# --- containerd + CNI ---------------------------------------------------------------------------------------
cat >"$E2E_STATE/cni/net.d/10-e2e-bridge.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "e2e",
  "plugins": [
    {
      "type": "bridge", "bridge": "$E2E_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "$E2E_POD_CIDR", "gateway": "$E2E_NODE_IP"}]],
               "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$E2E_STATE/cni/ipam"}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
cat >"$E2E_STATE/containerd/config.toml" <<EOF
version = 2
root = "$E2E_STATE/containerd/root"
state = "$E2E_STATE/containerd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri.btrfs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$E2E_SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  disable_apparmor = true
  # A negative oom_score_adj (the kubelet asks -998 for sandboxes) needs CAP_SYS_RESOURCE, which root
  # does not have here; runc then fails with "can't get final child's PID from pipe". Scores are kept
  # at or above containerd's own.
  restrict_oom_score_adj = true
  enable_selinux = false
  max_concurrent_downloads = 1
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$E2E_STATE/cni/net.d"
EOF
start containerd containerd --config "$E2E_STATE/containerd/config.toml"
wait_until "containerd" 60 ctr --address "$E2E_SOCK" version
ctr --address "$E2E_SOCK" -n "$E2E_CTR_NS" images import --no-unpack "$pause_archive" >/dev/null
# Also under its digest (repository@sha256:…), as a pulled image is: Pods may name it by digest.
ctr --address "$E2E_SOCK" -n "$E2E_CTR_NS" images import --no-unpack --digests --base-name "${app_image%:*}" \
  "$app_archive" >/dev/null

# --- kube-proxy ------------------------------------------------------------------------------------------------
cat >"$E2E_STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$kubeconfig"}
mode: iptables
clusterCIDR: "$E2E_POD_CIDR"
hostnameOverride: "$E2E_NODE_NAME"
bindAddress: "$E2E_NODE_IP"
healthzBindAddress: "127.0.0.1:$(free_port)"
metricsBindAddress: "127.0.0.1:$(free_port)"
# Leaves the machine's conntrack table size alone (kube-proxy would raise it).
conntrack: {maxPerCore: 0}
EOF
start kube-proxy "$KUBE_PROXY" --config="$E2E_STATE/kube-proxy.yaml" --v=1

# --- kubelet ------------------------------------------------------------------------------------------------------
cat >"$E2E_STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 (hybrid) through cgroupfs: there is no systemd to delegate to.
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: "unix://$E2E_SOCK"
address: "$E2E_NODE_IP"
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $(free_port)
# The kubelet's API (logs, exec) is reachable only on the node's bridge; the kube-apiserver calls it
# without a client certificate.
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
failSwapOn: false
# The machine's disk and memory are shared with other work: no eviction, no image garbage collection.
evictionHard: {memory.available: "0%", nodefs.available: "0%", imagefs.available: "0%", nodefs.inodesFree: "0%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# Never changes kernel settings or the kubelet's own OOM score on the machine.
protectKernelDefaults: false
oomScoreAdj: 0
kernelMemcgNotification: false
# No cluster DNS: Pods find Services through their environment variables.
resolvConf: ""
serializeImagePulls: true
nodeStatusUpdateFrequency: 5s
syncFrequency: 10s
fileCheckFrequency: 5s
shutdownGracePeriod: 0s
rotateCertificates: false
serverTLSBootstrap: false
EOF
# --containerd: the socket cAdvisor (inside the kubelet) asks for each container's image and name; at
# its default address it finds no containerd, and its container series then lack the `image` label the
# monitoring API's PromQL selects on (image!="").
start kubelet "$KUBELET" --config="$E2E_STATE/kubelet.yaml" --kubeconfig="$kubeconfig" \
  --root-dir="$E2E_STATE/kubelet" --cert-dir="$E2E_STATE/kubelet/pki" \
  --hostname-override="$E2E_NODE_NAME" --node-ip="$E2E_NODE_IP" --containerd="$E2E_SOCK" --v=1

kubectl_() { "$KUBECTL" --kubeconfig="$kubeconfig" "$@"; }
node_ready() {
  alive kubelet
  alive containerd
  [ "$(kubectl_ get node "$E2E_NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
wait_until "the Node $E2E_NODE_NAME to be Ready" 180 node_ready

# --- kube-router: NetworkPolicy enforcement -------------------------------------------------------------
# Firewall-only: its network policy controller alone (iptables filter rules and ipsets); the CNI bridge
# still wires the Pods and kube-proxy still serves the Services. It needs the registered Node (its
# address tells which Pods are local). No port of its own: health and metrics are off. It leaves its
# chains and ipsets behind when it stops; down.sh removes those that appear after this record.
iptables-save -t filter | awk '/^:/ {print substr($1, 2)}' >"$E2E_STATE/filter-chains-before"
ipset list -n >"$E2E_STATE/ipsets-before"
start kube-router "$KUBE_ROUTER" --kubeconfig="$kubeconfig" --hostname-override="$E2E_NODE_NAME" \
  --run-firewall=true --run-router=false --run-service-proxy=false \
  --service-cluster-ip-range="$E2E_SERVICE_CIDR" --health-port=0 --metrics-port=0 --v=1
# Its first full sync ends by appending this ACCEPT rule to its top-level chains, in the same
# iptables-restore as every Pod's chain: once it is there, the policies of that moment are enforced.
policy_synced() {
  alive kube-router
  iptables -S KUBE-ROUTER-FORWARD | grep -q 'rule to explicitly ACCEPT traffic that comply to network policies'
}
wait_until "kube-router's first NetworkPolicy sync" 90 policy_synced

# --- Traefik, the Ingress controller ----------------------------------------------------------------------------
ingress_port="$(free_port)"
ingress_tls_port="$(free_port)"
kubectl_ apply -f - >/dev/null <<EOF
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: traefik
spec:
  controller: traefik.io/ingress-controller
EOF
start traefik "$TRAEFIK" \
  --entryPoints.web.address="127.0.0.1:$ingress_port" \
  --entryPoints.websecure.address="127.0.0.1:$ingress_tls_port" --entryPoints.websecure.http.tls=true \
  --providers.kubernetesingress=true \
  --providers.kubernetesingress.endpoint="$apiserver" \
  --providers.kubernetesingress.token="$admin_token" \
  --providers.kubernetesingress.certAuthFilePath="$ca" \
  --providers.kubernetesingress.ingressClass=traefik \
  --ping=true --ping.entryPoint=web \
  --log.level=INFO --global.checkNewVersion=false --global.sendAnonymousUsage=false
wait_until "Traefik" 60 curl -fsS "http://127.0.0.1:$ingress_port/ping"

# --- monitoring: node_exporter, kube-state-metrics, Prometheus -----------------------------------------------
# What the monitoring API reads, scraped from the real node and labelled as the original's Prometheus
# labels it (the chart's recording rules and the API's PromQL expect those jobs and labels).
# node_exporter runs as a Pod on the node's network, as a DaemonSet's Pod would: the rules join its
# series to the node through its Pod (`namespace`/`pod` on its target, kube_pod_info from
# kube-state-metrics). Its binary comes from the cache by a hostPath; the pause image is its root file
# system (the binary is static).
monitoring_ns=pa-e2e-monitoring
node_exporter_port="$(free_port)"
mkdir -p "$E2E_STATE/bin"
install -m 0755 "$NODE_EXPORTER" "$E2E_STATE/bin/node_exporter"
kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: $monitoring_ns
---
apiVersion: v1
kind: Pod
metadata:
  name: node-exporter
  namespace: $monitoring_ns
  labels: {app.kubernetes.io/name: node-exporter}
spec:
  hostNetwork: true
  automountServiceAccountToken: false
  containers:
    - name: node-exporter
      image: $pause_image
      imagePullPolicy: Never
      command: [/node_exporter, "--web.listen-address=$E2E_NODE_IP:$node_exporter_port"]
      volumeMounts: [{name: binary, mountPath: /node_exporter, readOnly: true}]
  volumes:
    - name: binary
      hostPath: {path: "$E2E_STATE/bin/node_exporter", type: File}
EOF
wait_until "node_exporter's Pod to serve metrics" 120 curl -fsS "http://$E2E_NODE_IP:$node_exporter_port/metrics"

# kube-state-metrics, a host process with the cluster's kubeconfig. A namespace names its workspace in
# the label `<platformName>.io/workspace` (the end-to-end install keeps the default name, `platform`).
ksm_port="$(free_port)"
start kube-state-metrics "$KUBE_STATE_METRICS" --kubeconfig="$kubeconfig" \
  --host=127.0.0.1 --port="$ksm_port" --telemetry-host=127.0.0.1 --telemetry-port="$(free_port)" \
  --metric-labels-allowlist='namespaces=[platform.io/workspace]'
ksm_ready() { alive kube-state-metrics; curl -fsS "http://127.0.0.1:$ksm_port/metrics" | grep -q '^kube_node_info{'; }
wait_until "kube-state-metrics" 90 ksm_ready

# Prometheus, on the node's address so that the server's Pods reach it; every 5 s, so the first rule
# evaluations come within seconds. The kubelet is scraped over HTTPS, its self-signed certificate
# trusted by name; it allows anonymous reads on the bridge (above), so no credential is sent.
prometheus_port="$(free_port)"
kubelet_job() { # job-name metrics-path: one of the kubelet's endpoints, as job="kubelet" with metrics_path
  cat <<EOF
  - job_name: $1
    scheme: https
    metrics_path: $2
    honor_labels: true
    honor_timestamps: false
    tls_config: {ca_file: "$E2E_STATE/kubelet/pki/kubelet.crt", server_name: "$E2E_NODE_NAME"}
    static_configs: [{targets: ["$E2E_NODE_IP:10250"], labels: {node: "$E2E_NODE_NAME"}}]
    relabel_configs:
      - {target_label: job, replacement: kubelet}
      - {source_labels: [__metrics_path__], target_label: metrics_path}
EOF
}
cat >"$E2E_STATE/prometheus.yml" <<EOF
global: {scrape_interval: 5s, scrape_timeout: 4s, evaluation_interval: 5s}
rule_files: ["$repo/charts/platform-apiserver/files/monitoring/recording-rules.yaml"]
scrape_configs:
$(kubelet_job kubelet /metrics)
$(kubelet_job kubelet-cadvisor /metrics/cadvisor)
$(kubelet_job kubelet-resource /metrics/resource)
  # Every second: the recorded per-CPU busy seconds are sampled at each rule evaluation (5 s) from
  # the latest scrape, so a rate of them is off by at most one scrape interval in five.
  - job_name: node-exporter
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ["$E2E_NODE_IP:$node_exporter_port"]
        labels: {namespace: $monitoring_ns, pod: node-exporter}
  - job_name: kube-state-metrics
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$ksm_port"]}]
    metric_relabel_configs:
      - {source_labels: [label_platform_io_workspace], target_label: workspace}
EOF
start prometheus "$PROMETHEUS" --config.file="$E2E_STATE/prometheus.yml" \
  --storage.tsdb.path="$E2E_STATE/prometheus" --web.listen-address="$E2E_NODE_IP:$prometheus_port" \
  --log.level=warn
prometheus_ready() { alive prometheus; curl -fsS "http://$E2E_NODE_IP:$prometheus_port/-/ready"; }
wait_until "Prometheus" 90 prometheus_ready

cat >"$E2E_STATE/env" <<EOF
E2E_KUBECONFIG=$kubeconfig
E2E_KUBECTL=$KUBECTL
E2E_HELM=$HELM
E2E_IMAGE=$app_image
E2E_INGRESS_URL=http://127.0.0.1:$ingress_port
E2E_INGRESS_TLS_URL=https://127.0.0.1:$ingress_tls_port
E2E_INGRESS_CLASS=traefik
E2E_NODE_NAME=$E2E_NODE_NAME
E2E_APISERVER=$apiserver
E2E_STATE=$E2E_STATE
E2E_CONTAINERD_SOCK=$E2E_SOCK
E2E_PROMETHEUS_URL=http://$E2E_NODE_IP:$prometheus_port
EOF
e2e_log "up: Node $E2E_NODE_NAME Ready, Ingress at http://127.0.0.1:$ingress_port"
