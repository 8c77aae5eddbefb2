#!/usr/bin/env bash
# Builds the node side of the end-to-end tests' one-node cluster into the shared binary cache, keyed by
# version: kube-controller-manager, kube-scheduler, kubelet and kube-proxy from the same Kubernetes
# module and version as the kube-apiserver (test/cluster/kube), the Traefik ingress controller from
# its own wrapper module (test/e2e/cluster/traefik), kube-router (the NetworkPolicy enforcer) and
# node_exporter from their released modules, with each release's own go.mod and go.sum, and
# kube-state-metrics from its wrapper module (test/e2e/cluster/kube-state-metrics). Only builds what is
# missing.
#
#   test/e2e/cluster/build-node-binaries.sh                 build if missing, print the bin dir
#   test/e2e/cluster/build-node-binaries.sh --print-paths   print NAME=path lines for the harness
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cluster_dir="$(cd "$here/../../cluster" && pwd)"
# shellcheck source=../../cluster/versions.env
source "$cluster_dir/versions.env"
# shellcheck source=versions.env
source "$here/versions.env"
cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"
bin_dir="$cache_root/bin"
mkdir -p "$bin_dir"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

log() { printf '[build-node-binaries] %s\n' "$*" >&2; }

kube_minor="${KUBE_VERSION#v1.}"
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${kube_minor%%.*} -X k8s.io/component-base/version.gitTreeState=clean"
traefik_ldflags="-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION"
kube_router_ldflags="-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$KUBE_ROUTER_VERSION"
node_exporter_ldflags="-s -w -X github.com/prometheus/common/version.Version=${NODE_EXPORTER_VERSION#v}"
kube_state_metrics_ldflags="-s -w -X github.com/prometheus/common/version.Version=$KUBE_STATE_METRICS_VERSION"

names=(kube-controller-manager kube-scheduler kubelet kube-proxy traefik kube-router node_exporter kube-state-metrics)
path_of() { # name -> cached path
  case "$1" in
    traefik) echo "$bin_dir/traefik-$TRAEFIK_VERSION" ;;
    kube-router) echo "$bin_dir/kube-router-$KUBE_ROUTER_VERSION" ;;
    node_exporter) echo "$bin_dir/node_exporter-$NODE_EXPORTER_VERSION" ;;
    kube-state-metrics) echo "$bin_dir/kube-state-metrics-$KUBE_STATE_METRICS_VERSION" ;;
    *) echo "$bin_dir/$1-$KUBE_VERSION" ;;
  esac
}

print_result() {
  if [ "${1:-}" = "--print-paths" ]; then
    local name
    for name in "${names[@]}"; do
      printf '%s=%s\n' "$(echo "$name" | tr 'a-z-' 'A-Z_')" "$(path_of "$name")"
    done
  else
    echo "$bin_dir"
  fi
}

missing=0
for name in "${names[@]}"; do [ -x "$(path_of "$name")" ] || missing=1; done
if [ "$missing" = 0 ]; then
  print_result "${1:-}"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  log "ERROR: Go is not installed or not on PATH; it is needed to build the node binaries for the end-to-end tests."
  exit 2
fi

build() { # name pkg module-dir ldflags
  local name="$1" pkg="$2" dir="$3" ldflags="$4"
  local out
  out="$(path_of "$name")"
  [ -x "$out" ] && return
  log "building $name (cold builds take minutes; cached afterwards in $bin_dir)"
  local start
  start=$(date +%s)
  (cd "$dir" && CGO_ENABLED=0 nice go build -trimpath -pgo=off -ldflags "$ldflags" -o "$out.tmp.$$" "$pkg")
  mv "$out.tmp.$$" "$out"
  log "built $name in $(($(date +%s) - start))s"
}

# A command of a released module at its version (`go install pkg@version`: the release's own go.mod and
# go.sum decide every dependency; no wrapper module is needed when the release has no replaces).
build_release() { # name pkg@version ldflags
  local name="$1" pkg="$2" ldflags="$3"
  local out
  out="$(path_of "$name")"
  [ -x "$out" ] && return
  log "building $name (cold builds take minutes; cached afterwards in $bin_dir)"
  local start gobin
  start=$(date +%s)
  gobin="$(mktemp -d)"
  (cd "$gobin" && GOFLAGS= GOBIN="$gobin" CGO_ENABLED=0 nice go install -trimpath -pgo=off -ldflags "$ldflags" "$pkg")
  mv "$gobin/$(basename "${pkg%@*}")" "$out"
  rmdir "$gobin"
  log "built $name in $(($(date +%s) - start))s"
}

build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$cluster_dir/kube" "$kube_ldflags"
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$cluster_dir/kube" "$kube_ldflags"
build kubelet k8s.io/kubernetes/cmd/kubelet "$cluster_dir/kube" "$kube_ldflags"
build kube-proxy k8s.io/kubernetes/cmd/kube-proxy "$cluster_dir/kube" "$kube_ldflags"
build traefik github.com/traefik/traefik/v3/cmd/traefik "$here/traefik" "$traefik_ldflags"
build_release kube-router "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION" "$kube_router_ldflags"
build_release node_exporter "github.com/prometheus/node_exporter@$NODE_EXPORTER_VERSION" "$node_exporter_ldflags"
build kube-state-metrics k8s.io/kube-state-metrics/v2 "$here/kube-state-metrics" "$kube_state_metrics_ldflags"
print_result "${1:-}"
