#!/usr/bin/env bash
# Builds one libFuzzer target with clang (ASan + UBSan, in build-fuzz/) and runs it for the given
# number of seconds (default 300) on one core:
#   scripts/fuzz.sh [trace_loader_fuzzer|graph_file_fuzzer|estimate_fuzzer] [seconds]
# (a lone number keeps the old meaning: the trace loader for that many seconds). The seed corpus
# in tests/fuzz/ is read, not written: new inputs go to build-fuzz/corpus-<target>/, and a crash
# input to build-fuzz/crash-<target>-*; add each crash to the seed corpus as a regression input
# (the unit tests replay the seed corpora). The run's log is build-fuzz/<target>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
target=trace_loader_fuzzer
if [[ $# -gt 0 && ! "$1" =~ ^[0-9]+$ ]]; then
  target=$1
  shift
fi
seconds=${1:-300}
case "$target" in
  trace_loader_fuzzer) seeds=tests/fuzz/corpus max_len=65536 extra=() ;;
  graph_file_fuzzer) seeds=tests/fuzz/graph_file_corpus max_len=65536 extra=() ;;
  estimate_fuzzer) seeds=tests/fuzz/estimate_corpus max_len=4096 extra=(-dict=tests/fuzz/estimate.dict) ;;
  *)
    echo "fuzz.sh: unknown target '$target' (trace_loader_fuzzer, graph_file_fuzzer, estimate_fuzzer)" >&2
    exit 1
    ;;
esac
LUMOS_WITH_FUZZER=1 scripts/setup.sh
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DLUMOS_BUILD_FUZZER=ON -DLUMOS_BUILD_TESTS=OFF \
  -DLUMOS_BUILD_BENCH=OFF -DLUMOS_ENABLE_CUDA=OFF >/dev/null
cmake --build build-fuzz -j "${LUMOS_FUZZ_BUILD_JOBS:-$(nproc)}" --target "$target"
mkdir -p "build-fuzz/corpus-$target"
# -jobs=1 runs one worker process, whose output libFuzzer writes to fuzz-0.log; it is moved to
# build-fuzz/<target>.log and its end (runs, time, any finding) printed.
status=0
"build-fuzz/$target" "build-fuzz/corpus-$target" "$seeds" -max_total_time="$seconds" \
  -max_len="$max_len" -timeout=10 -jobs=1 -workers=1 -print_final_stats=1 \
  -artifact_prefix="build-fuzz/crash-$target-" "${extra[@]}" || status=$?
mv -f fuzz-0.log "build-fuzz/$target.log"
tail -n 12 "build-fuzz/$target.log"
exit "$status"
