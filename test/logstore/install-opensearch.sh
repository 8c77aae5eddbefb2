#!/usr/bin/env bash
# Makes the pinned OpenSearch test distribution available for the tests (see versions.env):
#  - Java 17+, Maven and unzip (installed with apt-get when missing and we are root),
#  - the distribution zip, fetched once through Maven into a cache keyed by version,
#  - when running as root: the unprivileged system user the node runs as (OpenSearch refuses root).
# Fails loudly (non-zero, with the reason) when any of it cannot be had.
#
#   test/logstore/install-opensearch.sh                print the cached zip's path
#   test/logstore/install-opensearch.sh --print-paths  print NAME=value lines for the harness
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"
cache_dir="$cache_root/opensearch"
zip="$cache_dir/opensearch-$OPENSEARCH_VERSION.zip"
run_user=platform-logstore

log() { printf '[install-opensearch] %s\n' "$*" >&2; }
fail() { log "ERROR: $*"; exit 2; }

apt_updated=false
apt_install() {
  [ "$(id -u)" -eq 0 ] || fail "missing $*; install it (apt-get install -y $*) or run as root"
  command -v apt-get >/dev/null 2>&1 || fail "missing $* and apt-get is not available"
  # Package lists refreshed within the hour (e.g. by scripts/ensure-nginx.sh in the same run) are reused.
  if [ "$apt_updated" = false ] && [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -60 2>/dev/null | head -1)" ]; then
    apt-get update -qq >&2
  fi
  apt_updated=true
  log "installing $* with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }

missing=()
if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" -lt 17 ]; then missing+=(openjdk-17-jre-headless); fi
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
major="$(java_major)"
# OpenSearch 2.x runs on Java 11-21 (3.x would need 21).
[ -n "$major" ] && [ "$major" -ge 17 ] || fail "java $major found; OpenSearch $OPENSEARCH_VERSION needs Java 17 or later"
java_home="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"

if [ ! -s "$zip" ]; then
  mkdir -p "$cache_dir"
  log "fetching OpenSearch $OPENSEARCH_VERSION (integ-test distribution) with Maven"
  start=$(date +%s)
  out="$(mktemp -d)"
  if ! mvn -B -q -Dstyle.color=never "org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN_VERSION:copy" \
    "-Dartifact=org.opensearch.distribution.integ-test-zip:opensearch:$OPENSEARCH_VERSION:zip" \
    "-DoutputDirectory=$out" >&2; then
    rm -rf "$out"
    fail "Maven could not fetch org.opensearch.distribution.integ-test-zip:opensearch:$OPENSEARCH_VERSION:zip"
  fi
  unzip -tq "$out/opensearch-$OPENSEARCH_VERSION.zip" >/dev/null || fail "the fetched zip is corrupt"
  mv "$out/opensearch-$OPENSEARCH_VERSION.zip" "$zip"
  rm -rf "$out"
  log "fetched OpenSearch $OPENSEARCH_VERSION in $(($(date +%s) - start))s into $cache_dir"
fi

uid="$(id -u)"
gid="$(id -g)"
if [ "$uid" -eq 0 ]; then
  if ! id -u "$run_user" >/dev/null 2>&1; then
    log "creating system user $run_user (OpenSearch refuses to run as root)"
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$run_user"
  fi
  uid="$(id -u "$run_user")"
  gid="$(id -g "$run_user")"
fi

if [ "${1:-}" = "--print-paths" ]; then
  printf 'OPENSEARCH_VERSION=%s\nOPENSEARCH_ZIP=%s\nJAVA_HOME=%s\nRUN_UID=%s\nRUN_GID=%s\n' \
    "$OPENSEARCH_VERSION" "$zip" "$java_home" "$uid" "$gid"
else
  echo "$zip"
fi
