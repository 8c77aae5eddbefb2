#!/usr/bin/env bash
# Stops the end-to-end cluster started by up.sh and removes every trace of it: its processes (by the
# PIDs up.sh recorded, and the container shims of its containerd), the Pods' containers, network
# namespaces and veths, its mounts, its iptables rules and chains, kube-router's chains and ipsets, the
# bridge and routes, its cgroups, the sysctls it changed, and the state directory. Safe to run when nothing (or only part) is up, so
# run.sh also runs it first to clear what a killed run left behind.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

pids_dir="$E2E_STATE/pids"

stop_pid() { # name: SIGTERM, then SIGKILL after 10 s
  local file="$pids_dir/$1.pid" pid
  [ -f "$file" ] || return 0
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$file"
}

# The kubelet first (it would restart what is removed below), then Prometheus, kube-state-metrics, the
# controllers and Traefik.
for name in kubelet prometheus kube-state-metrics traefik kube-router kube-proxy kube-scheduler kube-controller-manager; do
  stop_pid "$name"
done

# Every container of this containerd: kill the tasks, delete tasks and containers.
if [ -S "$E2E_SOCK" ]; then
  ctr_() { ctr --address "$E2E_SOCK" -n "$E2E_CTR_NS" "$@"; }
  for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1; done
  for id in $(ctr_ tasks ls -q 2>/dev/null); do
    for _ in $(seq 50); do ctr_ tasks delete -f "$id" >/dev/null 2>&1 && break; sleep 0.1; done
  done
  for id in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$id" >/dev/null 2>&1; done
fi
stop_pid containerd
# Shims outlive containerd; they carry this containerd's socket in their arguments.
for pid in $(pgrep -f "containerd-shim.*-address $E2E_SOCK" || true); do kill -KILL "$pid" 2>/dev/null; done
stop_pid kube-apiserver
stop_pid etcd

# Network namespaces the CRI made for this cluster's Pods (recorded by up.sh as those not there before).
if [ -f "$E2E_STATE/netns-before" ]; then
  for ns in $(comm -13 <(sort "$E2E_STATE/netns-before") <(ip netns list 2>/dev/null | awk '{print $1}' | sort)); do
    case "$ns" in cni-*) ip netns delete "$ns" 2>/dev/null ;; esac
  done
fi

# Mounts under the state directory (the kubelet's volumes, containerd's rootfs and shm), deepest first.
if [ -d "$E2E_STATE" ]; then
  for _ in 1 2 3; do
    mounts="$(awk -v s="$E2E_STATE" 'index($2, s) == 1 {print $2}' /proc/self/mounts | sort -r)"
    [ -z "$mounts" ] && break
    for m in $mounts; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
  done
fi

# kube-router's leftovers (it removes nothing when it stops): the filter table's chains and the ipsets
# that appeared after up.sh recorded those there before starting it, among the names kube-router gives
# (chains KUBE-ROUTER-*, KUBE-NWPLCY-*, KUBE-POD-FW-*; ipsets KUBE-SRC-*, KUBE-DST-* and the TMP-* of
# an interrupted swap). First every rule that jumps to such a chain, then the chains, then the sets (a
# set in use by a rule cannot be destroyed).
appeared() { # before-file now-list-command... -> names in the current list, not in the before file
  local before="$1"
  shift
  comm -13 <(sort "$before") <("$@" 2>/dev/null | sort)
}
filter_chains() { iptables-save -t filter | awk '/^:/ {print substr($1, 2)}'; }
if [ -f "$E2E_STATE/filter-chains-before" ] && command -v iptables-save >/dev/null 2>&1; then
  chains="$(appeared "$E2E_STATE/filter-chains-before" filter_chains | grep -E '^(KUBE-ROUTER-|KUBE-NWPLCY-|KUBE-POD-FW-)')"
  for chain in $chains; do iptables -t filter -F "$chain" 2>/dev/null; done
  for chain in $chains; do
    iptables-save -t filter | grep -E -- "^-A .* -j $chain( |\$)" | while read -r rule; do
      # eval: the rules' comments are quoted.
      eval "iptables -t filter ${rule/-A /-D }" 2>/dev/null
    done
  done
  for chain in $chains; do iptables -t filter -X "$chain" 2>/dev/null; done
fi
if [ -f "$E2E_STATE/ipsets-before" ] && command -v ipset >/dev/null 2>&1; then
  for name in $(appeared "$E2E_STATE/ipsets-before" ipset list -n | grep -E '^(KUBE-SRC-|KUBE-DST-|TMP-)'); do
    ipset destroy "$name" 2>/dev/null
  done
fi

# iptables: the rules in built-in chains that jump to the cluster's chains (KUBE-* from kube-proxy
# and the kubelet, CNI-* from the CNI plugins, PA-E2E-* from up.sh), then those chains.
clean_iptables() { # iptables|ip6tables
  local ipt="$1" table rule chain
  command -v "$ipt" >/dev/null 2>&1 || return 0
  for table in filter nat mangle raw; do
    "$ipt" -t "$table" -S >/dev/null 2>&1 || continue
    "$ipt" -t "$table" -S | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*(KUBE-|CNI-|PA-E2E-)' | while read -r rule; do
      # eval: the rules' comments are quoted ("kubernetes service portals").
      eval "$ipt -t $table ${rule/-A /-D }" 2>/dev/null
    done
    for chain in $("$ipt" -t "$table" -S | awk '/^-N (KUBE-|CNI-|PA-E2E-)/ {print $2}'); do
      "$ipt" -t "$table" -F "$chain" 2>/dev/null
    done
    for chain in $("$ipt" -t "$table" -S | awk '/^-N (KUBE-|CNI-|PA-E2E-)/ {print $2}'); do
      "$ipt" -t "$table" -X "$chain" 2>/dev/null
    done
  done
}
clean_iptables iptables
clean_iptables ip6tables

ip route del blackhole "$E2E_SERVICE_CIDR" 2>/dev/null
ip link del "$E2E_BRIDGE" 2>/dev/null
# Veths left on the bridge's side (their Pod namespaces are gone, so normally none).
for link in $(ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
  [ -f "$E2E_STATE/veths-before" ] && ! grep -qx "$link" "$E2E_STATE/veths-before" && ip link del "$link" 2>/dev/null
done

# cgroups the kubelet and runc made (cgroupfs driver): the kubepods tree under every hierarchy.
for hierarchy in /sys/fs/cgroup/*/; do
  [ -d "$hierarchy/kubepods" ] && find "$hierarchy/kubepods" -depth -type d -exec rmdir {} + 2>/dev/null
  [ -d "$hierarchy/kubepods.slice" ] && find "$hierarchy/kubepods.slice" -depth -type d -exec rmdir {} + 2>/dev/null
done

# Sysctls as they were before up.sh.
if [ -f "$E2E_STATE/sysctl-before" ]; then
  while read -r key value; do sysctl -qw "$key=$value" 2>/dev/null; done <"$E2E_STATE/sysctl-before"
fi

rm -rf "$E2E_STATE"
exit 0
