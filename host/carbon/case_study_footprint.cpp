// What a utilization sweep's footprint counts (docs/guide/carbon.md, "The case study's model").
#include <cmath>

#include "carbon/placement.hpp"
#include "common/error.hpp"

namespace lumos::carbon {

CarbonSettings::Footprint parse_footprint(const std::string& text, const std::string& what) {
  if (text == "paper") return CarbonSettings::Footprint::kPaper;
  if (text == "fleet") return CarbonSettings::Footprint::kFleet;
  if (text == "marginal") return CarbonSettings::Footprint::kMarginal;
  throw InputError(what + " " + text + ": expected paper, marginal or fleet");
}

const char* to_string(CarbonSettings::Footprint f) {
  switch (f) {
    case CarbonSettings::Footprint::kFleet:
      return "fleet";
    case CarbonSettings::Footprint::kMarginal:
      return "marginal";
    case CarbonSettings::Footprint::kPaper:
      return "paper";
  }
  return "?";
}

double footprint_g(const Fleet& f, const Placement& p, const CarbonSettings& s) {
  switch (s.footprint) {
    case CarbonSettings::Footprint::kMarginal:
      return p.operational_g;
    case CarbonSettings::Footprint::kFleet:
      return p.footprint_g();
    case CarbonSettings::Footprint::kPaper:
      break;
  }
  // Jobs share servers and fill one before the next (nothing stranded), so the servers running
  // jobs are the reserved resources rounded up to whole servers; the others are powered off.
  double powered = 0;
  for (size_t k = 0; k < f.pools.size() && k < p.used.size(); ++k)
    powered += std::ceil(p.used[k] / f.pools[k].resources * (1 - 1e-12));
  const double base_kwh = powered * s.server_base_w * p.horizon_h / 1000.0 * f.pue;
  return p.footprint_g() + base_kwh * s.grid_g_per_kwh;
}

}  // namespace lumos::carbon
