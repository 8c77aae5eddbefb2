#!/usr/bin/env bash
# `npm run image`: builds deploy/Dockerfile without a Docker daemon (buildah, chroot isolation), from two
# base images made here from Debian packages (apt, the machine's configured sources) and Node 24 (the
# same node binary scripts/ensure-node.sh installs, plus npm from the npm registry for the build stage).
#
# Everything is cached under ~/.cache/platform-apiserver/ and keyed by content:
#   containers/          buildah's image store (base images, the Dockerfile's layers)
#   images/<key>.tar     the finished image as a docker-archive (what containerd imports)
# The key covers the Dockerfile, the build context (package files, tsconfigs, src/) and the base images,
# so a rebuild without changes only hashes files.
#
# Prints KEY=value lines on stdout: IMAGE (the reference the archive carries), ARCHIVE, SIZE_BYTES.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# shellcheck source=ensure-node.sh
source scripts/ensure-node.sh >/dev/null
cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"
store="$cache_root/containers"
images_dir="$cache_root/images"
mkdir -p "$store" "$images_dir"

log() { printf '[build-image] %s\n' "$*" >&2; }
need() { command -v "$1" >/dev/null 2>&1 || { log "ERROR: $1 is missing (apt-get install $2)"; exit 2; }; }
need buildah buildah
need apt-get apt
need dpkg-deb dpkg

# buildah with its own store in the cache; vfs would copy every layer, overlay shares them.
bah() { buildah --root "$store/storage" --runroot "$store/run" --storage-driver overlay "$@"; }
# Raising a resource limit needs CAP_SYS_RESOURCE, which root may not have (it does not on the project's
# machines): RUN steps get limits at or below the build's own (buildah's chroot runs with nproc 32768).
ulimits=(--ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" --ulimit "nproc=4096:4096")

sha() { sha256sum | cut -c1-16; }

node_bin="$(command -v node)"
node_version="$(node -p process.versions.node)"
npm_spec='npm@11'

# Debian packages of the two bases: the runtime gets the C/C++ runtime node links against; the build
# stage also gets a shell and the few tools npm scripts and the Dockerfile's RUN lines use.
runtime_pkgs=(libc6 libstdc++6 netbase)
build_pkgs=("${runtime_pkgs[@]}" dash coreutils findutils grep sed)

# The exact package versions apt would install into an empty system (a simulation, no download).
resolve() { apt-get -s -o Dir::State::status=/dev/null install -y "$@" 2>/dev/null | grep '^Inst ' | sort; }

# Makes a root filesystem from the packages' contents (no maintainer scripts: none of these needs one).
make_rootfs() { # dir packages...
  local dir="$1"
  shift
  local debs
  debs="$(mktemp -d)"
  mkdir -p "$debs/partial"
  apt-get -qq -o APT::Sandbox::User=root -o Dir::State::status=/dev/null -o Dir::Cache::archives="$debs" --download-only install -y "$@" >&2
  local deb
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$dir"; done
  rm -rf "$debs"
  rm -rf "$dir"/usr/share/{doc,man,info,locale,lintian} "$dir"/usr/share/common-licenses
  mkdir -p "$dir/tmp" "$dir/etc" "$dir/usr/local/bin"
  chmod 1777 "$dir/tmp"
  # A passwd entry for the server's numeric user, so tools that look the user up find it.
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:10001:10001::/nonexistent:/usr/sbin/nologin\n' >"$dir/etc/passwd"
  printf 'root:x:0:\nnonroot:x:10001:\n' >"$dir/etc/group"
}

# Commits a root filesystem as a local image.
commit_rootfs() { # dir image [config options...]
  local ctr
  ctr="$(bah from --pull=never scratch)"
  bah copy --quiet "$ctr" "$1" / >/dev/null
  bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${@:3}" "$ctr"
  bah commit --quiet --rm "$ctr" "$2" >/dev/null
}

have_image() { bah inspect --type image "$1" >/dev/null 2>&1; }

# --- base images --------------------------------------------------------------------------------------
npm_tgz="$(ls "$cache_root"/npm-11.*.tgz 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$npm_tgz" ]; then
  log "fetching $npm_spec for the build stage"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$npm_spec" >/dev/null)
  mv "$tmp"/npm-*.tgz "$cache_root/"
  rm -rf "$tmp"
  npm_tgz="$(ls "$cache_root"/npm-11.*.tgz | sort -V | tail -1)"
fi
base_script_version=3
runtime_key="$( { echo "$base_script_version"; resolve "${runtime_pkgs[@]}"; } | sha)"
build_key="$( { echo "$base_script_version $node_version $(basename "$npm_tgz")"; resolve "${build_pkgs[@]}"; } | sha)"
runtime_image="localhost/platform-apiserver-base-runtime:$runtime_key"
build_image="localhost/platform-apiserver-base-build:$build_key"

if ! have_image "$runtime_image"; then
  log "making the runtime base image $runtime_image (${runtime_pkgs[*]})"
  rootfs="$(mktemp -d)"
  make_rootfs "$rootfs" "${runtime_pkgs[@]}"
  commit_rootfs "$rootfs" "$runtime_image"
  rm -rf "$rootfs"
fi
if ! have_image "$build_image"; then
  log "making the build base image $build_image (${build_pkgs[*]}, node $node_version, $(basename "$npm_tgz"))"
  rootfs="$(mktemp -d)"
  make_rootfs "$rootfs" "${build_pkgs[@]}"
  ln -sf dash "$rootfs/bin/sh"
  # The runtime base has no node of its own: the Dockerfile copies this one in.
  install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$npm_tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # npm trusts the CA bundle the build mounts there (see below); only the build stage has this setting.
  commit_rootfs "$rootfs" "$build_image" --env NODE_EXTRA_CA_CERTS=/run/build-ca/ca.crt
  rm -rf "$rootfs"
fi

# --- the image ------------------------------------------------------------------------------------------
context_files=(deploy/Dockerfile .dockerignore package.json package-lock.json tsconfig.json tsconfig.build.json)
key="$( {
  echo "$runtime_image $build_image"
  sha256sum "${context_files[@]}"
  find src -type f -print0 | sort -z | xargs -0 sha256sum
} | sha)"
version="$(node -p 'require("./package.json").version')"
image="docker.io/library/platform-apiserver:$version-$key"
archive="$images_dir/platform-apiserver-$key.tar"

if [ -f "$archive" ]; then
  log "up to date: $image ($archive)"
else
  log "building $image from deploy/Dockerfile"
  start=$(date +%s)
  # The build stage's npm reaches the registry with the machine's trust: behind a TLS-inspecting proxy,
  # its CA is only in the machine's bundle. Mounted for the RUN steps, never part of a layer.
  ca_bundle="${NODE_EXTRA_CA_CERTS:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
  ca_mount=()
  [ -f "$ca_bundle" ] && ca_mount=(--volume "$ca_bundle:/run/build-ca/ca.crt:ro")
  bah build --quiet --isolation chroot --pull=never --layers "${ulimits[@]}" "${ca_mount[@]}" \
    --build-arg "BUILD_IMAGE=$build_image" --build-arg "RUNTIME_IMAGE=$runtime_image" \
    -f deploy/Dockerfile -t "$image" . >&2
  bah push --quiet "$image" "docker-archive:$archive.tmp:$image" >&2
  mv "$archive.tmp" "$archive"
  log "built in $(($(date +%s) - start))s"
fi
size="$(stat -c %s "$archive")"
log "image $image: $((size / 1024 / 1024)) MiB uncompressed ($archive)"
printf 'IMAGE=%s\nARCHIVE=%s\nSIZE_BYTES=%s\n' "$image" "$archive" "$size"
