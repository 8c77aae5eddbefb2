#!/usr/bin/env bash
# Builds promtool from the pinned Prometheus module and prints its path (build-prometheus-command.sh).
exec bash "$(dirname "${BASH_SOURCE[0]}")/build-prometheus-command.sh" promtool
