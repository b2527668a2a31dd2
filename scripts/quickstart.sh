#!/usr/bin/env bash
# One command on a fresh machine: install, build, and run the main job on the embedded default
# (a model-driven estimate of GPT-3 15B on 16 H100s; no trace needed). With arguments, runs
# `lumos ARGS...` instead (e.g. `scripts/quickstart.sh replay TRACE.json.gz`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
if (($# == 0)); then exec build/lumos estimate; fi
exec build/lumos "$@"
