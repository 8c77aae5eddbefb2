#!/usr/bin/env bash
# Prints the PIDs of the processes whose environment holds PLATFORM_RUN_ID=RUN_ID, one a line: what a
# run (.ci/run) started and that is still alive. Leaves out this script and its ancestors (the run
# asking is one of them), and reads /proc with bash builtins only, so the scan starts no process that
# could find itself.
#   scripts/run-processes.sh RUN_ID
set -uo pipefail
want="PLATFORM_RUN_ID=${1:?usage: run-processes.sh RUN_ID}"

# This script and its ancestors, from /proc/PID/stat's fourth field (after the command's parentheses).
declare -A asking=()
pid=$$
while [ -n "$pid" ] && [ "$pid" != 0 ] && [ -z "${asking[$pid]:-}" ]; do
  asking[$pid]=1
  stat=''
  read -r stat 2>/dev/null <"/proc/$pid/stat" || break
  stat="${stat##*) }"
  read -r _ pid _ <<<"$stat"
done

for dir in /proc/[0-9]*; do
  pid="${dir#/proc/}"
  [ -z "${asking[$pid]:-}" ] || continue
  while IFS= read -r -d '' entry; do
    if [ "$entry" = "$want" ]; then
      echo "$pid"
      break
    fi
  done 2>/dev/null <"$dir/environ"
done
exit 0
