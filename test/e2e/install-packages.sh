#!/usr/bin/env bash
# Debian packages the end-to-end tests need (installed only when missing): buildah builds the image,
# containerd + runc run the Pods, the CNI plugins wire them to the node's bridge, iptables and conntrack
# serve kube-proxy, ipset (with iptables) serves kube-router's NetworkPolicy enforcement, gcc builds the
# static pause binary.
set -euo pipefail
need=()
for pair in buildah:buildah containerd:containerd runc:runc ctr:containerd iptables:iptables \
  conntrack:conntrack ipset:ipset gcc:gcc openssl:openssl curl:curl python3:python3; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
if [ "${#need[@]}" -gt 0 ]; then
  echo "[e2e] installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
