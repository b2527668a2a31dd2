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
# One line per block: its label, its instruction count, and its loads, stores and branches.
awk '
  /^\$L__BB/ { if (label != "") printf "%-14s %4d instructions  %2d loads %2d stores %2d branches\n", label, n, ld, st, br
               label = $1; n = ld = st = br = 0; next }
  /^\s*(\/\/|$|\.|\{|\}|\))/ { next }
  label != "" { n++; if ($0 ~ /ld\./) ld++; if ($0 ~ /st\./) st++; if ($0 ~ /bra/) br++ }
  END { if (label != "") printf "%-14s %4d instructions  %2d loads %2d stores %2d branches\n", label, n, ld, st, br }
' "$out/replay.ptx"
