#!/usr/bin/env bash
# `npm run test:e2e`: builds what is missing (node binaries, Traefik, the exporters, Prometheus, the
# image; all cached), starts the one-node cluster (test/e2e/cluster/up.sh), runs test/e2e/*.test.ts
# against it, and always stops and cleans the cluster (test/e2e/cluster/down.sh), also when a step or a
# test fails or the run is interrupted. Needs root (network namespaces, mounts, iptables), as the cluster's kubelet does.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# shellcheck source=../../scripts/ensure-node.sh
source scripts/ensure-node.sh >/dev/null
[ "$(id -u)" = 0 ] || { echo "[e2e] ERROR: the one-node cluster needs root" >&2; exit 2; }
bash test/e2e/install-packages.sh
bash test/cluster/build-binaries.sh >/dev/null
bash test/e2e/cluster/build-node-binaries.sh >/dev/null
bash test/tools/build-prometheus.sh >/dev/null
eval "$(bash scripts/build-image.sh)"

# One cluster per machine: its bridge, addresses and state directory are fixed.
exec 9>/run/lock/platform-apiserver-e2e.lock
flock 9
# A killed run may have left a cluster behind.
bash test/e2e/cluster/down.sh
trap 'bash test/e2e/cluster/down.sh' EXIT
trap 'exit 130' INT TERM
started=$SECONDS
bash test/e2e/cluster/up.sh "$IMAGE" "$ARCHIVE"
echo "[e2e] cluster up in $((SECONDS - started))s" >&2
set -a
# shellcheck disable=SC1091
source /var/tmp/platform-apiserver-e2e/env
set +a
node --test --test-concurrency=1 --test-timeout=900000 --test-reporter=spec "${@:-test/e2e/*.test.ts}"
