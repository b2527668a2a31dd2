#!/usr/bin/env bash
# One command on a fresh machine: install, build the `lumos` command alone (the tests and
# benchmarks build in scripts/test.sh), and run the main job on the embedded default (a sweep of
# GPT-3 175B layouts on 256 to 1024 H100, H200 and B200 GPUs, from the model alone: the best
# configurations printed, the variants and their Pareto front written to build/sweep.csv and
# build/pareto.csv; no trace needed). With arguments, runs `lumos ARGS...` instead (e.g.
# `scripts/quickstart.sh replay TRACE.json.gz`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh --target lumos
if (($# == 0)); then exec build/lumos sweep -o build/sweep.csv --pareto build/pareto.csv; fi
exec build/lumos "$@"
