#!/usr/bin/env bash
# Sizes of the basic blocks of the CUDA replay kernel's PTX, for the instruction counts of the
# device projection (host/engine/device_projection.cpp). Needs nvcc, not a GPU.
#   scripts/ptx-counts.sh [ARCH]   (default sm_90)
set -euo pipefail
cd "$(dirname "$0")/.."
arch="${1:-sm_90}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
"$nvcc" --version | tail -2
"$nvcc" -std=c++17 -arch="$arch" -O3 -fmad=false -ptx -Ihost -Icuda cuda/batch_replay_cuda.cu \
  -o "$out/replay.ptx"
# Per kernel (the replay body with the critical path, LanesThread<4, true>, and finish times alone,
# <4, false>): one line per block, its label, its instruction count, and its loads, stores and
# branches, and the blocks it may branch to.
awk '
  /\.entry/ { if (label != "") printf "%-14s %4d instructions  %2d loads %2d stores %2d branches ->%s\n", label, n, ld, st, br, to
               label = ""; print "== " $3; next }
  /^\$L__BB/ { if (label != "") printf "%-14s %4d instructions  %2d loads %2d stores %2d branches ->%s\n", label, n, ld, st, br, to
               label = $1; n = ld = st = br = 0; to = ""; next }
  /^\s*(\/\/|$|\.|\{|\}|\))/ { next }
  label != "" { n++; if ($0 ~ /ld\./) ld++; if ($0 ~ /st\./) st++
                if ($0 ~ /bra/) { br++; t = $NF; sub(/;$/, "", t); to = to " " t } }
  END { if (label != "") printf "%-14s %4d instructions  %2d loads %2d stores %2d branches ->%s\n", label, n, ld, st, br, to }
' "$out/replay.ptx"
# Registers per thread and spills of each kernel (the projection's occupancy).
"$nvcc" -std=c++17 -arch="$arch" -O3 -fmad=false -Xptxas -v -c -Ihost -Icuda \
  cuda/batch_replay_cuda.cu -o "$out/replay.o" 2>&1 | grep -A3 "entry function.*LanesThread" |
  grep -E "entry|registers|spill"
