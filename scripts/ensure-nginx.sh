#!/usr/bin/env bash
# Makes sure an nginx binary is installed (the trusted-proxy tests put a real nginx in front of the
# server): Debian's nginx-light, installed with apt-get when missing. The package's service is not
# needed (tests start their own nginx on loopback with a config of their own). Prints the binary's path.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/ensure-debian-command.sh" nginx nginx-light
