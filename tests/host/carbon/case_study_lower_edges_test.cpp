// Why the paper model's lower band edges fall before the paper's (docs/guide/carbon.md, "The case
// study's model"): the paper reports SCI adding more than 5% from 27% utilization (embodied
// amortized over the years in service, its Fig. 7) and more than 10% from 13% (zeroed after 5
// years, Fig. 8); lumos's paper model gives 21% and 7%. These tests hold the two reasons the guide
// gives, each against what placing Table 4's servers by its metrics must do, so that a change
// which brings an edge in without losing the peak makes one of them fail.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "carbon/fleet.hpp"
#include "carbon/placement.hpp"
#include "host/carbon/case_study_curve.hpp"

using namespace lumos::carbon;

namespace {

using lumos::carbon::testing::Curve;

Fleet mit740() {
  return load_fleet(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/mit-740.toml");
}

CarbonSettings paper_settings(const Fleet& f, Amortization a, double base_w) {
  CarbonSettings s;
  s.grid_g_per_kwh = f.grid_g_per_kwh;
  s.amortization = a;
  s.footprint = CarbonSettings::Footprint::kPaper;
  s.server_base_w = base_w;
  return s;
}

std::vector<double> levels_from(int from_pct, int to_pct) {
  std::vector<double> out;
  for (int i = from_pct; i <= to_pct; ++i) out.push_back(i / 100.0);
  return out;
}

// A level's utilization is the demand placed, a little under the level (the next job would pass
// it); the paper and the guide read whole points.
long whole_points(double utilization) {
  return std::lround(utilization * 100);
}

}  // namespace

// Years in service: oSCI and SCI both fill the Silver-4216s first (Table 4: lowest O, lowest
// M + O), so SCI adds nothing until they are full, at 14.7% of the fleet's score.
TEST(CaseStudyLowerEdges, BothMetricsFillTheSilver4216sFirstWithYearsInService) {
  const Fleet f = mit740();
  const auto points = utilization_sweep(f, case_study_jobs(1), levels_from(1, 14),
                                        paper_settings(f, Amortization::kYearsInService, 117.55));
  for (const UtilizationPoint& p : points) EXPECT_EQ(p.added_over_osci[1], 0) << p.utilization;
}

// Past 14.7%, SCI takes the Silver-4116s and oSCI the Gold-6326s, and the base power sets both
// the slope there (the lower edge) and the peak at 58%: a smaller base power brings the edge in
// and pulls the peak under the paper's 27-33%, a larger one the other way. At 100 W the edge is
// in (22%) and the peak out (25.9%); at 117.55 W, the default, the reverse (21%, 27.7%). No base
// power between gives both: the scan below, in 2.5 W steps, checks every one.
TEST(CaseStudyLowerEdges, NoBasePowerHoldsTheYearsInServicePeakAndLowerEdgeTogether) {
  const Fleet f = mit740();
  std::vector<double> levels = levels_from(15, 30);
  for (double l : levels_from(56, 60)) levels.push_back(l);
  for (double base_w = 95; base_w <= 125; base_w += 2.5) {
    const Curve c = lumos::carbon::testing::curve_of(
        utilization_sweep(f, case_study_jobs(1), levels,
                          paper_settings(f, Amortization::kYearsInService, base_w)),
        0.05);
    const bool peak_in = std::fabs(c.peak - 0.30) <= 0.03;
    const bool edge_in = whole_points(c.band_from) >= 22;
    EXPECT_FALSE(peak_in && edge_in) << base_w << " W: peak " << c.peak << ", from " << c.band_from
                                     << "; update the guide and the model";
    if (base_w == 100) EXPECT_TRUE(edge_in && !peak_in) << c.peak << " " << c.band_from;
    if (base_w == 117.5) EXPECT_TRUE(peak_in && !edge_in) << c.peak << " " << c.band_from;
  }
}

// Zeroed after 5 years, SCI's first choice is the E5-2640v4 (0.632 against the Silver-4216's
// 0.234 + 0.425), 8.2% of the fleet's score; then both metrics fill the Silver-4216s until 14.7%.
// There the carbon SCI adds stays the same while the footprint grows, so its share falls: a curve
// built this way can first pass 10% before 8.2% or after 14.7%, never at the paper's 13%.
TEST(CaseStudyLowerEdges, TheZeroedShareFallsWhileBothMetricsFillTheSilver4216s) {
  const Fleet f = mit740();
  for (double base_w : {0.0, 60.0, 117.55, 180.0}) {
    const auto points =
        utilization_sweep(f, case_study_jobs(1), levels_from(9, 14),
                          paper_settings(f, Amortization::kZeroAfterLifetime, base_w));
    for (size_t i = 1; i < points.size(); ++i) {
      EXPECT_LT(points[i].added_over_osci[1], points[i - 1].added_over_osci[1])
          << base_w << " W at " << points[i].utilization;
      const double added_g = points[i].footprint_g[1] - points[i].footprint_g[0];
      const double before_g = points[i - 1].footprint_g[1] - points[i - 1].footprint_g[0];
      EXPECT_NEAR(added_g, before_g, 0.002 * before_g) << base_w << " W";
    }
  }
}
