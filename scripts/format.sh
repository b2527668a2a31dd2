#!/usr/bin/env bash
# Formats the C++/CUDA sources with the repository's .clang-format; --check reports files that
# differ and exits 1 instead of rewriting them.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [[ "${1:-}" == "--check" ]]; then
  clang-format --dry-run --Werror "${files[@]}"
else
  clang-format -i "${files[@]}"
fi
