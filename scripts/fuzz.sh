#!/usr/bin/env bash
# Builds the libFuzzer target for the trace loader with clang (ASan + UBSan) and runs it on the
# corpus in tests/fuzz/corpus for the given number of seconds (default 300). New interesting
# inputs are added to the corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
LUMOS_WITH_FUZZER=1 scripts/setup.sh
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DLUMOS_BUILD_FUZZER=ON -DLUMOS_BUILD_TESTS=OFF \
  -DLUMOS_BUILD_BENCH=OFF -DLUMOS_ENABLE_CUDA=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target trace_loader_fuzzer
build-fuzz/trace_loader_fuzzer tests/fuzz/corpus -max_total_time="${1:-300}" -max_len=65536 \
  -timeout=10 -print_final_stats=1
