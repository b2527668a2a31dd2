#!/usr/bin/env bash
# One command for a lent GPU (H100/H200), within 8 minutes: builds for sm_90, runs the GPU tests
# (CUDA batch replay vs the CPU backend, device Pareto vs host), the batch-replay benchmark for
# V = 1, 1024, 16384 on a 100K-node graph and a generated GPT-3 175B iteration, both kernels
# (with the critical path and finish times alone), both backends, beside the projected rate,
# and (with --calibrate) the quick
# PyTorch calibration sweep; prints a short table and leaves logs in OUTDIR.
# Without a GPU it builds and runs everything up to the point where a GPU is needed.
# Exits 1 when a GPU test fails (after the benchmark table), and on a failed build.
# Usage: scripts/device-check.sh [--calibrate] [OUTDIR]   (default OUTDIR: $OUT or build-device/results)
# On a lent machine with no registry: run scripts/fetch-device-deps.sh here first and carry .devdeps
# (the device tool's `carry`); the shared traces do not travel, so trace-based tests skip there.
set -euo pipefail
cd "$(dirname "$0")/.."
calibrate=0
if [[ "${1:-}" == "--calibrate" ]]; then calibrate=1; shift; fi
out="${1:-${OUT:-build-device/results}}"
mkdir -p "$out"
extra=()
if compgen -G ".devdeps/*.deb" >/dev/null; then
  # Carried .debs (scripts/fetch-device-deps.sh): unpack into a private prefix, never into /.
  rm -rf /tmp/devdeps && mkdir -p /tmp/devdeps
  for f in .devdeps/*.deb; do dpkg-deb -x "$f" /tmp/devdeps 2>/dev/null || dpkg -x "$f" /tmp/devdeps; done
  lib=/tmp/devdeps/usr/lib/x86_64-linux-gnu
  export CPATH="/tmp/devdeps/usr/include${CPATH:+:$CPATH}" LIBRARY_PATH="$lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  extra+=("-DCMAKE_PREFIX_PATH=/tmp/devdeps/usr;$lib/cmake" "-DCXXOPTS_INCLUDE_DIR=/tmp/devdeps/usr/include"
          "-DLIBDEFLATE_INCLUDE_DIR=/tmp/devdeps/usr/include" "-DLIBDEFLATE_LIBRARY=$lib/libdeflate.so.0")
elif command -v dpkg-query >/dev/null; then
  missing=()
  for p in libsimdjson-dev libcxxopts-dev libdeflate-dev libgtest-dev libbenchmark-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]] && timeout 60 apt-get update -qq >/dev/null 2>&1; then scripts/setup.sh
    else echo "device-check: missing ${missing[*]}: run scripts/fetch-device-deps.sh where a registry is reachable and carry .devdeps" >&2; exit 1; fi
  fi
fi
# The block runs in a pipeline's subshell under set -e; with pipefail its exit status (a failed
# build, or GPU tests that failed) is the script's.
{
  gpu_tests_failed=0
  echo "== build (sm_90)"
  cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DLUMOS_TRACE_DIR="${LUMOS_TRACE_DIR:-$PWD/../shared/traces}" "${extra[@]}" >/dev/null
  cmake --build build-device -j "$(nproc)" 2>&1 | tail -n 2
  echo "== lumos info"
  build-device/lumos info
  echo "== GPU tests"
  if [[ -x build-device/tests/lumos_cuda_tests ]]; then
    build-device/tests/lumos_cuda_tests --gtest_brief=1 || { echo "GPU TESTS FAILED"; gpu_tests_failed=1; }
  else
    echo "no CUDA build (nvcc missing): GPU tests not built"
  fi
  echo "== batch replay benchmark (100K-node synthetic graph; generated GPT-3 175B)"
  printf "%-8s %-10s %9s %-6s %16s %16s %12s %12s\n" backend graph variants path node_variants/s kernel_nv/s vs_reference projected
  for backend in cpu cuda; do
    for graph in "--nodes 100000" "--graph generated:gpt3-175b"; do
      for v in 1 1024 16384; do
        for path in "" "--no-path"; do
          if json=$(timeout 120 build-device/lumos bench batch $graph --variants "$v" --backend "$backend" $path --json 2>&1); then
            echo "$json" >> "$out/bench_batch.jsonl"
            python3 -c "import json,sys; d=json.loads(sys.argv[1]); print('%-8s %-10s %9d %-6s %16.3g %16.3g %12.1f %12.3g' % (d['backend'], sys.argv[2], d['variants'], sys.argv[3], d['node_variants_per_s'], d.get('kernel_node_variants_per_s', 0), d['vs_reference'], d['cuda_projection']['node_variants_per_s']))" "$json" "${graph##* }" "$([[ -n $path ]] && echo finish || echo full)" \
              || echo "$backend $graph V=$v $path: unreadable result"
          else
            echo "$backend $graph V=$v $path: $json"
          fi
        done
      done
    done
  done
  if ((calibrate)); then
    echo "== calibration (quick)"
    timeout 240 python3 scripts/calibrate/calibrate.py --quick --out "$out/calib" --budget-s 200 || echo "calibration ended early"
  fi
  if ((gpu_tests_failed)); then
    echo "device-check: GPU tests failed (see \"== GPU tests\" above)"
    exit 1
  fi
} 2>&1 | tee "$out/device-check.txt"
