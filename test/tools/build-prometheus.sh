#!/usr/bin/env bash
# Builds the Prometheus server (for the monitoring tests and benchmark) from the Go module proxy into
# the cache keyed by version, beside promtool and from the same pinned module (test/tools/promtool),
# and prints its path. Only builds when missing. Fails loudly (non-zero) when Go is missing or the
# build fails: the monitoring tests must never be skipped for want of a Prometheus.
#
# Built without the `builtinassets` tag: the web UI's assets are produced by an npm build that the
# module does not ship, so this binary serves the HTTP API only (the UI pages answer 404/500).
# Built with -tags remove_all_sd: the tests scrape static targets or nothing at all (their data is
# backfilled), and the service-discovery plugins would triple the build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"
bin_dir="$cache_root/bin"
out="$bin_dir/prometheus-$PROMETHEUS_MODULE_VERSION"

log() { printf '[build-prometheus] %s\n' "$*" >&2; }

if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "ERROR: Go is not installed or not on PATH; it is needed to build Prometheus for the monitoring tests."
  exit 2
fi
if ! grep -q "github.com/prometheus/prometheus $PROMETHEUS_MODULE_VERSION" "$here/promtool/go.mod"; then
  log "ERROR: $here/promtool/go.mod does not require github.com/prometheus/prometheus $PROMETHEUS_MODULE_VERSION; run: (cd $here/promtool && go get github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION)"
  exit 3
fi

mkdir -p "$bin_dir"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
log "building prometheus $PROMETHEUS_MODULE_VERSION (a cold build takes a few minutes; cached afterwards in $bin_dir)"
start=$(date +%s)
(cd "$here/promtool" && CGO_ENABLED=0 go build -trimpath -tags remove_all_sd \
  -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_MODULE_VERSION" \
  -o "$out.tmp.$$" github.com/prometheus/prometheus/cmd/prometheus)
"$out.tmp.$$" --version >/dev/null
mv "$out.tmp.$$" "$out"
log "built prometheus in $(($(date +%s) - start))s"
echo "$out"
