#!/usr/bin/env bash
# A sweep spread over a Slurm job array: each array task runs one shard of the same sweep, then
# one task merges the shards' variants CSVs and their Pareto fronts (lumos pareto --merge gives
# the single run's file; the front of the shards' fronts is the single run's front).
#
#   sbatch --array=0-15 scripts/sweep-slurm.sh OUT_DIR [lumos sweep options...]
#   scripts/sweep-slurm.sh --merge OUT_DIR          # after the array has finished
#
# Without Slurm, SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT may be set by hand (what the
# test does). LUMOS names the binary (default: build/lumos beside this script).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
lumos="${LUMOS:-$here/build/lumos}"
if [[ "${1:-}" == "--merge" ]]; then
  out="${2:?usage: sweep-slurm.sh --merge OUT_DIR}"
  shopt -s nullglob
  variants=("$out"/variants.shard*.csv)
  fronts=("$out"/pareto.shard*.csv)
  ((${#variants[@]} > 0)) || { echo "sweep-slurm: no shard CSVs in $out" >&2; exit 1; }
  objectives=()
  [[ -f "$out/objectives" ]] && objectives=(--objectives "$(cat "$out/objectives")")
  "$lumos" pareto --merge "${variants[@]}" -o "$out/variants.csv"
  "$lumos" pareto "${objectives[@]}" "${fronts[@]}" -o "$out/pareto.csv"
  exit 0
fi
out="${1:?usage: sbatch --array=0-N sweep-slurm.sh OUT_DIR [lumos sweep options...]}"
shift
: "${SLURM_ARRAY_TASK_ID:?run under sbatch --array, or set SLURM_ARRAY_TASK_ID}"
: "${SLURM_ARRAY_TASK_COUNT:?run under sbatch --array, or set SLURM_ARRAY_TASK_COUNT}"
mkdir -p "$out"
# The front's objectives, for the merge (the default when the options name none).
objectives="time_to_train_h,gpu_hours,energy_kwh"
args=("$@")
for ((k = 0; k < ${#args[@]}; ++k)); do
  [[ "${args[k]}" == "--objectives" ]] && objectives="${args[k + 1]:-$objectives}"
done
echo "$objectives" > "$out/objectives"
i="$SLURM_ARRAY_TASK_ID" n="$SLURM_ARRAY_TASK_COUNT"
exec "$lumos" sweep "$@" --shard "$i/$n" --threads "${SLURM_CPUS_PER_TASK:-0}" \
  -o "$out/variants.shard$i.csv" --pareto "$out/pareto.shard$i.csv"
