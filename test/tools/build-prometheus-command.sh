#!/usr/bin/env bash
# Builds one command of the pinned Prometheus module (test/tools/promtool/go.mod) from the Go module
# proxy into the cache keyed by version, and prints its path: `promtool` (to lint metrics and backfill
# test data) or `prometheus` (the server of the monitoring tests and benchmark). Only builds when
# missing. Fails loudly (non-zero) when Go is missing or the build fails: no test may be skipped for
# want of a tool.
#
# Built with -tags remove_all_sd: the tests scrape static targets or nothing at all, and the
# service-discovery plugins would triple the build. Without the `builtinassets` tag: the web UI's
# assets come from an npm build the module does not ship, so the server serves its HTTP API only (the
# UI pages answer 404/500).
set -euo pipefail

command="${1:?usage: build-prometheus-command.sh promtool|prometheus}"
case "$command" in
  promtool | prometheus) ;;
  *) printf 'build-prometheus-command.sh: unknown command %s (promtool or prometheus)\n' "$command" >&2; exit 64 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"
bin_dir="$cache_root/bin"
out="$bin_dir/$command-$PROMETHEUS_MODULE_VERSION"

log() { printf '[build-%s] %s\n' "$command" "$*" >&2; }

if [ -x "$out" ]; then
  echo "$out"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  log "ERROR: Go is not installed or not on PATH; it is needed to build $command for the tests."
  exit 2
fi
if ! grep -q "github.com/prometheus/prometheus $PROMETHEUS_MODULE_VERSION" "$here/promtool/go.mod"; then
  log "ERROR: $here/promtool/go.mod does not require github.com/prometheus/prometheus $PROMETHEUS_MODULE_VERSION; run: (cd $here/promtool && go get github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION)"
  exit 3
fi

mkdir -p "$bin_dir"
export GOTOOLCHAIN=local GOFLAGS=-mod=mod
log "building $command $PROMETHEUS_MODULE_VERSION (a cold build takes minutes; cached afterwards in $bin_dir)"
start=$(date +%s)
(cd "$here/promtool" && CGO_ENABLED=0 go build -trimpath -tags remove_all_sd \
  -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_MODULE_VERSION" \
  -o "$out.tmp.$$" "github.com/prometheus/prometheus/cmd/$command")
"$out.tmp.$$" --version >/dev/null
mv "$out.tmp.$$" "$out"
log "built $command in $(($(date +%s) - start))s"
echo "$out"
