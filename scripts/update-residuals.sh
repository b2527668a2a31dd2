#!/usr/bin/env bash
# Regenerates kernels_db/calibration.json: every published run's in-sample error and its
# leave-one-source-out error (the fitted constants refitted without the run's source), with the
# coverage cross-validation measured for estimates' ranges, the date and the commit. Run after any
# change to kernels_db or the model, then rebuild (the table is compiled into lumos).
#   scripts/update-residuals.sh [path/to/lumos]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
lumos="${1:-$root/build/lumos}"
[[ -x "$lumos" ]] || { echo "update-residuals: no lumos at $lumos (build it first)" >&2; exit 1; }
commit="$(git -C "$root" rev-parse --short HEAD)"
git -C "$root" diff --quiet -- kernels_db host || commit="$commit+changes"
"$lumos" bench estimate --cross-validate --commit "$commit" \
  --write-residuals "$root/kernels_db/calibration.json"
