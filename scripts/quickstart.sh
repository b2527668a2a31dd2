#!/usr/bin/env bash
# One command on a fresh machine: install, build the `lumos` command alone into build-quick/ (the
# tests and benchmarks build in scripts/test.sh, into build/), and run the main job on the
# embedded default (a sweep of GPT-3 175B layouts on 256 to 1024 H100, H200 and B200 GPUs, from
# the model alone: the best configurations printed, the variants and their Pareto front written to
# build-quick/sweep.csv and build-quick/pareto.csv; no trace needed). With arguments, runs
# `lumos ARGS...` instead (e.g. `scripts/quickstart.sh replay TRACE.json.gz`).
#
# The build is set for the first answer (README "Quick start" has its measured time):
# LUMOS_QUICK_BUILD (unity batches of up to 16 files, a precompiled cxxopts, -O1 for the
# libraries the sweep spends no time in: CMakeLists.txt),
# Ninja (it compiles every library's files at once where Make waits for each library's
# dependencies), no tests or benchmarks, and no CUDA backend where no GPU is visible, as it could
# not run there. Its own folder keeps these settings out of build/, which scripts/build.sh and
# scripts/test.sh configure as they always have.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cuda=ON
if ! nvidia-smi -L >/dev/null 2>&1; then
  cuda=OFF
  echo "quickstart: no GPU visible (nvidia-smi missing or failing): building without the CUDA" \
    "backend, which could not run here (scripts/build.sh builds it wherever nvcc is)" >&2
fi
generator=()
# A folder keeps the generator it was first configured with.
if [[ ! -f build-quick/CMakeCache.txt ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
configure() {
  cmake -S . -B build-quick "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DLUMOS_ENABLE_CUDA="$cuda" -DLUMOS_BUILD_TESTS=OFF -DLUMOS_BUILD_BENCH=OFF \
    -DLUMOS_QUICK_BUILD="$1" >/dev/null
}
configure ON
if ! cmake --build build-quick -j "$(nproc)" --target lumos; then
  # A file-local name that clashes with another file's in one unity batch (a file added since
  # CMakeLists.txt's list of exceptions) fails the batch: build file by file instead. CI sets
  # LUMOS_QUICKSTART_STRICT=1 so that such a clash fails it rather than slowing the quick start.
  if [[ "${LUMOS_QUICKSTART_STRICT:-0}" == 1 ]]; then
    echo "quickstart: the unity build failed (LUMOS_QUICKSTART_STRICT=1: no fallback)" >&2
    exit 1
  fi
  echo "quickstart: the unity build failed; building file by file" >&2
  generator=()
  configure OFF
  cmake --build build-quick -j "$(nproc)" --target lumos
fi
if (($# == 0)); then
  exec build-quick/lumos sweep -o build-quick/sweep.csv --pareto build-quick/pareto.csv
fi
exec build-quick/lumos "$@"
