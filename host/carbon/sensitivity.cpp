#include "carbon/sensitivity.hpp"

#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "common/format.hpp"

namespace lumos::carbon {

namespace {

// The cluster footprint (per score-year) when the job runs on pool `k`: every type's M plus k's O.
double footprint_on(const ScoreYearTable& t, size_t k) {
  double all_m = 0;
  for (const ScoreYearRow& r : t.rows) all_m += r.m;
  return all_m + t.rows[k].o;
}

}  // namespace

const char* to_string(SweepParameter p) {
  return p == SweepParameter::kLifetime ? "lifetime_y" : "grid_g_per_kwh";
}

SensitivitySweep sensitivity_sweep(const Fleet& f, const CarbonSettings& reference,
                                   SweepParameter parameter, const std::vector<double>& values,
                                   const ProgressFn& progress) {
  SensitivitySweep out;
  out.parameter = parameter;
  // Index 1 of kMetrics is SCI, 0 oSCI.
  out.reference_pick = score_year_table(f, reference).chosen[1];
  for (double v : values) {
    LUMOS_EXPECT(std::isfinite(v), "place: a sweep value is not a number");
    Fleet g = f;
    CarbonSettings s = reference;
    if (parameter == SweepParameter::kGridIntensity) {
      LUMOS_EXPECT(v >= 0, "place --sweep-grid-intensity: intensities must be >= 0");
      s.grid_g_per_kwh = v;
    } else {
      LUMOS_EXPECT(v > 0, "place --sweep-lifetime: lifetimes must be positive");
      for (ServerPool& p : g.pools) p.lifetime_y = v;
    }
    const ScoreYearTable t = score_year_table(g, s);
    SensitivityPoint pt;
    pt.value = v;
    double m = 0, total = 0;
    for (const ScoreYearRow& r : t.rows) m += r.m, total += r.m + r.o;
    pt.embodied_share = total > 0 ? m / total : 0;
    pt.osci_pick = t.chosen[0];
    pt.sci_pick = t.chosen[1];
    const double base = footprint_on(t, pt.osci_pick);
    pt.added_sci = base > 0 ? footprint_on(t, pt.sci_pick) / base - 1 : 0;
    pt.added_reference_pick = base > 0 ? footprint_on(t, out.reference_pick) / base - 1 : 0;
    out.points.push_back(pt);
    if (progress) progress(out.points.size(), values.size());
  }
  return out;
}

std::vector<double> parse_sweep_values(const std::string& text, const std::string& what, double lo,
                                       double hi, const std::string& example) {
  const std::string where = what + " " + text;
  std::vector<double> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == ':') {
      const std::optional<double> v = parse_finite(text.substr(start, i - start));
      LUMOS_EXPECT(v.has_value(), where + ": expected FROM:TO:STEP, e.g. " + example);
      parts.push_back(*v);
      start = i + 1;
    }
  LUMOS_EXPECT(parts.size() == 3, where + ": expected FROM:TO:STEP, e.g. " + example);
  const double from = parts[0], to = parts[1], step = parts[2];
  LUMOS_EXPECT(from >= lo && to <= hi && from <= to,
               where + strprintf(": values lie in [%g, %g], FROM <= TO", lo, hi));
  LUMOS_EXPECT(step > 0, where + ": STEP must be positive");
  LUMOS_EXPECT((to - from) / step <= 10000,
               where + strprintf(": %.4g values from FROM to TO by STEP; at most 10,000",
                                 std::floor((to - from) / step) + 1));
  std::vector<double> out;
  for (int64_t i = 0;; ++i) {
    const double v = from + static_cast<double>(i) * step;
    if (v > to + 1e-9 * std::max(1.0, std::fabs(to))) break;
    out.push_back(std::min(v, to));
  }
  return out;
}

}  // namespace lumos::carbon
