#!/usr/bin/env bash
# Regenerates the README's carbon figures (docs/case-study-*.svg): the case study's added-carbon
# curve on the paper's 740-server fleet, for both amortization policies, from build/lumos.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/lumos ]] || { echo "carbon-figures: build lumos first (scripts/test.sh builds it)" >&2; exit 1; }
for policy in years-in-service zero-after-lifetime; do
  build/lumos place examples/fleets/mit-740.toml --utilization 0:1:0.05 --case-study \
    --amortization "$policy" --plot "docs/case-study-$policy.svg"
done
