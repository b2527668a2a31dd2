#!/usr/bin/env bash
# Regenerates the carbon figures (docs/case-study-*.svg, docs/sensitivity-*.svg) from build/lumos:
# the case study's added-carbon curve on the paper's 740-server fleet for both amortization
# policies (the default paper model), and what SCI's choice adds on the paper's two servers
# as the grid intensity and the lifetime vary (its Figs. 3 and 4).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/lumos ]] || { echo "carbon-figures: build lumos first (scripts/test.sh builds it)" >&2; exit 1; }
for policy in years-in-service zero-after-lifetime; do
  build/lumos place examples/fleets/mit-740.toml --utilization 0:1:0.01 --case-study \
    --amortization "$policy" --plot "docs/case-study-$policy.svg" >/dev/null
done
build/lumos place examples/fleets/two-servers.toml --sweep-grid-intensity 0:600:10 \
  --plot docs/sensitivity-grid-intensity.svg >/dev/null
build/lumos place examples/fleets/two-servers.toml --sweep-lifetime 3:12:1 \
  --plot docs/sensitivity-lifetime.svg >/dev/null
echo "carbon-figures: wrote docs/case-study-{years-in-service,zero-after-lifetime}.svg, docs/sensitivity-{grid-intensity,lifetime}.svg"
