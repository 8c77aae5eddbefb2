#!/usr/bin/env bash
# Entry point of the README's commands on a fresh machine: makes sure Node 24, the npm dependencies,
# the control-plane binaries and helm (and, for tests, nginx and the OpenSearch log store) are present,
# then runs the demo or the whole test suite.
#   bash scripts/run.sh test   end-to-end tests (one-node cluster), then unit + integration tests against
#                              a real kube-apiserver + etcd
#   bash scripts/run.sh demo   local control plane with demo nodes, and the server against it
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# shellcheck source=ensure-node.sh
source scripts/ensure-node.sh
echo "run: node $(node --version) at $(command -v node)" >&2

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi

bash test/cluster/build-binaries.sh >/dev/null
bash test/tools/build-promtool.sh >/dev/null
bash test/tools/build-prometheus.sh >/dev/null

case "${1:-}" in
  test)
    shift
    # The trusted-proxy tests put a real nginx in front of the server; the log-store tests put one
    # (TLS + basic auth) in front of OpenSearch.
    bash scripts/ensure-nginx.sh >/dev/null
    # Java, Maven and the pinned OpenSearch test distribution (cached by version) for the log API tests.
    bash test/logstore/install-opensearch.sh >/dev/null
    npm run --silent typecheck
    npm run --silent lint
    # End-to-end: the image built from deploy/Dockerfile, installed with helm on a one-node cluster
    # (real kubelet, containerd + runc, Traefik Ingress); torn down whatever happens (test/e2e/run.sh).
    bash test/e2e/run.sh
    # One run, one summary line: unit tests, then integration tests sharing one control plane.
    node --test --test-concurrency=1 --test-timeout=600000 \
      --test-global-setup=test/global-setup.ts \
      --test-reporter=spec \
      'test/unit/**/*.test.ts' 'test/integration/**/*.test.ts' "$@"
    ;;
  demo)
    shift
    npm run --silent build
    exec node scripts/demo.ts "$@"
    ;;
  *)
    echo "usage: $0 test|demo" >&2
    exit 64
    ;;
esac
