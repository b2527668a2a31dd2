#!/usr/bin/env bash
# One command for a lent GPU (H100/H200): builds for sm_90, runs the GPU tests and the
# benchmarks, and prints a short table. On a machine without a GPU it still builds and runs
# everything up to the point where a GPU is needed (the GPU tests then report "skipped").
# Usage: scripts/device-check.sh [OUTDIR]   (default: $OUT or build-device/results)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-build-device/results}}"
mkdir -p "$out"
if command -v apt-get >/dev/null && [[ $(id -u) -eq 0 ]]; then scripts/setup.sh; fi
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DLUMOS_TRACE_DIR="${LUMOS_TRACE_DIR:-$PWD/../shared/traces}" >/dev/null
cmake --build build-device -j "$(nproc)" 2>&1 | tail -n 3
{
  echo "== lumos info"
  build-device/lumos info
  echo "== GPU tests"
  if [[ -x build-device/tests/lumos_cuda_tests ]]; then
    build-device/tests/lumos_cuda_tests --gtest_brief=1 || echo "GPU TESTS FAILED"
  else
    echo "no CUDA build (nvcc missing): GPU tests not built"
  fi
  echo "== host tests"
  (cd build-device && ctest -j "$(nproc)" 2>&1 | tail -n 3)
  echo "== benchmarks"
  build-device/bench/bench_foundation --benchmark_counters_tabular=true \
    --benchmark_out="$out/bench_foundation.json" --benchmark_out_format=json 2>&1 | tail -n 8
} 2>&1 | tee "$out/device-check.txt"
