#!/usr/bin/env bash
# Builds the original's ks-apiserver (KubeSphere v3.4.1) from its public source into the binary cache,
# keyed by version, for `npm run bench:vs-original`. Only builds when the binary is missing; prints its path.
#
# The source: ORIGINAL_SRC (a checkout of the tag), else ORIGINAL_GIT_DIR (a clone or bare mirror that has
# the tag: `git archive`), else a shallow clone of the tag from ORIGINAL_REPO (the public repository).
# The build uses the source's own vendor/ directory (no module downloads) and the local Go toolchain.
#
#   test/bench/build-original-apiserver.sh          build if missing, print the binary's path
#   BUILD_JOBS=2 test/bench/build-original-apiserver.sh   more parallel compiles (default 1: a shared machine)
set -euo pipefail

version="${ORIGINAL_VERSION:-v3.4.1}"
repo="${ORIGINAL_REPO:-https://github.com/kubesphere/kubesphere.git}"
cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"
out="$cache_root/bin/ks-apiserver-$version"

log() { printf '[build-original] %s\n' "$*" >&2; }

if [ -x "$out" ] && [ -d "$out-crds" ]; then
  echo "$out"
  exit 0
fi
command -v go >/dev/null 2>&1 || { log "ERROR: Go is not on PATH"; exit 2; }
mkdir -p "$(dirname "$out")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
src="$work/src"
if [ -n "${ORIGINAL_SRC:-}" ]; then
  log "copying the source from $ORIGINAL_SRC"
  cp -a "$ORIGINAL_SRC" "$src"
elif [ -n "${ORIGINAL_GIT_DIR:-}" ]; then
  log "exporting $version from $ORIGINAL_GIT_DIR"
  mkdir -p "$src"
  # install/ (manifests, swagger-ui) is not part of the build; a partial mirror may lack its large blobs.
  git --git-dir="$ORIGINAL_GIT_DIR" archive "$version" -- . ':(exclude)install' >"$work/src.tar"
  tar -x -C "$src" -f "$work/src.tar"
else
  log "cloning $version (shallow)"
  git clone --quiet --depth 1 --branch "$version" "$repo" "$src"
fi

# v3.4.1 declares go 1.19 and ships vendor/: building from it needs no module download. GOTOOLCHAIN=local
# keeps the installed Go (no toolchain switch); -mod=vendor is the default here, stated so a GOFLAGS
# of -mod=mod in the environment cannot turn it off.
export GOTOOLCHAIN=local GOFLAGS="-mod=vendor -buildvcs=false" CGO_ENABLED=0
log "building cmd/ks-apiserver $version with $(go version | awk '{print $3}') (a cold build takes many minutes)"
start=$(date +%s)
(cd "$src" && nice go build -p "${BUILD_JOBS:-1}" -trimpath -ldflags "-s -w" -o "$out.tmp" ./cmd/ks-apiserver)
# The CRDs its installer applies, for the benchmark to install (beside the binary, of the same version).
rm -rf "$out-crds" && cp -r "$src/config/ks-core/crds" "$out-crds"
mv "$out.tmp" "$out"
log "built $out in $(($(date +%s) - start)) s"
echo "$out"
