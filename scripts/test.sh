#!/usr/bin/env bash
# One command on a fresh machine: install, build, and run every test (ctest). Tests on real
# traces read ../shared/traces (override with LUMOS_TRACE_DIR=...); without it they skip and say so.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
extra=()
[[ -n "${LUMOS_TRACE_DIR:-}" ]] && extra+=("-DLUMOS_TRACE_DIR=${LUMOS_TRACE_DIR}")
scripts/build.sh "${extra[@]}"
cd build
ctest --output-on-failure -j "$(nproc)"
