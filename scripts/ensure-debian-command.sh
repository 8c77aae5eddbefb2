#!/usr/bin/env bash
# Makes sure a command from a Debian package is installed, and prints its path.
#   bash scripts/ensure-debian-command.sh <command> <package>
# Looks on PATH and in /usr/sbin; installs the package with apt-get when the command is missing (with sudo
# when not root). Fails loudly when it cannot be installed.
set -euo pipefail
name="$1"
package="$2"

find_command() {
  command -v "$name" 2>/dev/null || { [ -x "/usr/sbin/$name" ] && echo "/usr/sbin/$name"; } || true
}

found="$(find_command)"
if [ -z "$found" ]; then
  command -v apt-get >/dev/null 2>&1 || {
    echo "ensure $name: $name is missing and apt-get is not available; install $package and retry" >&2
    exit 2
  }
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "ensure $name: $name is missing; installing it needs root (run: apt-get install -y $package)" >&2
      exit 2
    }
    sudo=(sudo -n)
  fi
  echo "ensure $name: installing $package with apt-get" >&2
  "${sudo[@]}" apt-get update -qq >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" >&2
  found="$(find_command)"
  [ -n "$found" ] || { echo "ensure $name: $package installed but no $name found" >&2; exit 2; }
fi
echo "$found"
