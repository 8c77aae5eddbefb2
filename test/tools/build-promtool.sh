#!/usr/bin/env bash
# Builds Prometheus' promtool (for `promtool check metrics` in the tests) from the Go module proxy into
# the cache keyed by version, and prints its path. Only builds when missing. Fails loudly (non-zero)
# when Go is missing or the build fails: the metrics test must never be skipped for want of a tool.
# Built with -tags remove_all_sd: promtool's service-discovery plugins are not needed to lint metrics
# and would triple the build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"
bin_dir="$cache_root/bin"
out="$bin_dir/promtool-$PROMETHEUS_MODULE_VERSION"

log() { printf '[build-promtool] %s\n' "$*" >&2; }

if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "ERROR: Go is not installed or not on PATH; it is needed to build promtool for the metrics test."
  exit 2
fi
if ! grep -q "github.com/prometheus/prometheus $PROMETHEUS_MODULE_VERSION" "$here/promtool/go.mod"; then
  log "ERROR: $here/promtool/go.mod does not require github.com/prometheus/prometheus $PROMETHEUS_MODULE_VERSION; run: (cd $here/promtool && go get github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION)"
  exit 3
fi

mkdir -p "$bin_dir"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
log "building promtool $PROMETHEUS_MODULE_VERSION (a cold build takes a minute or two; cached afterwards in $bin_dir)"
start=$(date +%s)
(cd "$here/promtool" && CGO_ENABLED=0 go build -trimpath -tags remove_all_sd \
  -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_MODULE_VERSION" \
  -o "$out.tmp.$$" github.com/prometheus/prometheus/cmd/promtool)
"$out.tmp.$$" --version >/dev/null
mv "$out.tmp.$$" "$out"
log "built promtool in $(($(date +%s) - start))s"
echo "$out"
