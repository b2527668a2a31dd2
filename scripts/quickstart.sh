#!/usr/bin/env bash
# One command on a fresh machine: install, build, and run the main job on the embedded default
# (a replay of the demo trace lumos generates itself; no trace needed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec build/lumos replay "$@"
