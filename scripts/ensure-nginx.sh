#!/usr/bin/env bash
# Makes sure an nginx binary is installed (the trusted-proxy tests put a real nginx in front of the
# server). Installs Debian's nginx-light with apt-get when it is missing; the package's service is
# not needed (tests start their own nginx on loopback with a config of their own).
# Prints the path of the nginx binary. Fails loudly when it cannot be installed.
set -euo pipefail

find_nginx() { command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true; }

nginx_bin="$(find_nginx)"
if [ -z "$nginx_bin" ]; then
  command -v apt-get >/dev/null 2>&1 || {
    echo "ensure-nginx: nginx is missing and apt-get is not available; install nginx and retry" >&2
    exit 2
  }
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "ensure-nginx: nginx is missing; installing it needs root (run: apt-get install -y nginx-light)" >&2
      exit 2
    }
    sudo=(sudo -n)
  fi
  echo "ensure-nginx: installing nginx-light with apt-get" >&2
  "${sudo[@]}" apt-get update -qq >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light >&2
  nginx_bin="$(find_nginx)"
  [ -n "$nginx_bin" ] || { echo "ensure-nginx: nginx-light installed but no nginx binary found" >&2; exit 2; }
fi
echo "$nginx_bin"
