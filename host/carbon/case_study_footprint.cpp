// What a utilization sweep's footprint counts (docs/guide/carbon.md, "The case study's model").
#include <algorithm>
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

double case_study_server_base_w(const Fleet& f) {
  if (f.grid_g_per_kwh <= 0) return 0;
  // embodied = share x (embodied + (processors + base) x lifetime hours x intensity x PUE)
  double embodied_g = 0, processor_wh = 0, server_h = 0;
  for (const ServerPool& p : f.pools) {
    const double n = static_cast<double>(p.count), hours = p.lifetime_y * kHoursPerYear;
    embodied_g += n * p.embodied_g;
    processor_wh += n * p.max_w * hours;
    server_h += n * hours;
  }
  if (server_h <= 0) return 0;
  const double g_per_wh = f.grid_g_per_kwh / 1000.0 * f.pue;
  const double operational_g = embodied_g * (1 / kCaseStudyEmbodiedShare - 1);
  return std::max(0.0, (operational_g / g_per_wh - processor_wh) / server_h);
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
