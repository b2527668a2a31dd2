// The paper model of the case study (`lumos place --case-study`, its default; docs/guide/carbon.md,
// "The case study's model"): the paper's cluster footprint (every server's embodied carbon + the
// operational carbon of the servers running jobs) with servers that draw a base power whatever
// their load. Held against the figures the paper reports for its 740-server fleet (Figs. 7 and
// 8, §6): years in service, "nearly 30%" at the peak and > 5% from 27% to 78% utilization;
// embodied zeroed after 5 years, "nearly 30%" and > 10% from 13% to 80%. The tolerances are 3
// points on a peak and 5 on a band edge; the two lower edges fall 1 point outside theirs, and
// the tests hold what is measured there (case_study_lower_edges_test.cpp holds why they come
// early).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "carbon/fleet.hpp"
#include "carbon/placement.hpp"
#include "common/error.hpp"
#include "host/carbon/case_study_curve.hpp"

using namespace lumos::carbon;

namespace {

using lumos::carbon::testing::Curve;

CarbonSettings paper_settings(const Fleet& f, Amortization a) {
  CarbonSettings s;
  s.grid_g_per_kwh = f.grid_g_per_kwh;
  s.amortization = a;
  s.footprint = CarbonSettings::Footprint::kPaper;
  s.server_base_w = case_study_server_base_w(f);
  return s;
}

Curve paper_curve(Amortization a, double threshold) {
  const Fleet f = load_fleet(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/mit-740.toml");
  std::vector<double> levels;
  for (int i = 0; i <= 100; ++i) levels.push_back(i / 100.0);
  return lumos::carbon::testing::curve_of(
      utilization_sweep(f, case_study_jobs(1), levels, paper_settings(f, a)), threshold);
}

}  // namespace

// Fig. 7. Measured: +27.7% at 58% utilization, > 5% from 21% to 82%.
TEST(CaseStudyPaperModel, YearsInServicePeaksNearThirtyPercentWithThePapersUpperEdge) {
  const Curve c = paper_curve(Amortization::kYearsInService, 0.05);
  EXPECT_NEAR(c.peak, 0.30, 0.03);
  EXPECT_NEAR(c.band_to, 0.78, 0.05);
  // The lower edge is 6 points before the paper's 27%: SCI's first step past the Silver-4216s
  // takes 109 Silver-4116s, whose base power per unit of score is 2.4 times the Gold-6326's.
  EXPECT_NEAR(c.band_from, 0.21, 0.015);
  EXPECT_LT(c.band_from, 0.22) << "the paper's lower edge is now within 5 points: update the guide";
}

// Fig. 8. Measured: +30.9% at 44% utilization, > 10% from 7% to 77%.
TEST(CaseStudyPaperModel, ZeroAfterLifetimePeaksNearThirtyPercentWithThePapersUpperEdge) {
  const Curve c = paper_curve(Amortization::kZeroAfterLifetime, 0.10);
  EXPECT_NEAR(c.peak, 0.30, 0.03);
  EXPECT_NEAR(c.band_to, 0.80, 0.05);
  // Zeroing makes the 2016 E5-2640v4 SCI's first choice; the fleet's embodied carbon and the
  // base power keep SCI's addition under 10% only up to 7% utilization, not the paper's 13%.
  EXPECT_NEAR(c.band_from, 0.07, 0.015);
  EXPECT_LT(c.band_from, 0.08) << "the paper's lower edge is now within 5 points: update the guide";
}

// Unlike the marginal model, whose two curves coincide from 59% (SCI fills the same types under
// both approaches), the paper model takes each share over its own approach's embodied carbon, the
// zeroed one smaller: the zeroed curve stays above, as the paper's does (> 10% at 80% against
// < 5% at 78%). Measured: 18.4% against 17.0% at 70%, 7.9% against 7.4% at 80%.
TEST(CaseStudyPaperModel, TheZeroedCurveStaysAboveAtHighLoads) {
  const Fleet f = load_fleet(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/mit-740.toml");
  const std::vector<double> levels = {0.7, 0.8};
  const auto yis = utilization_sweep(f, case_study_jobs(1), levels,
                                     paper_settings(f, Amortization::kYearsInService));
  const auto zero = utilization_sweep(f, case_study_jobs(1), levels,
                                      paper_settings(f, Amortization::kZeroAfterLifetime));
  for (size_t i = 0; i < levels.size(); ++i)
    EXPECT_GT(zero[i].added_over_osci[1], yis[i].added_over_osci[1] + 0.004) << levels[i];
}

// The base power against a hand count: 4 servers of 10 cores and 1,000 score, jobs of 500 score
// (half a server each), 50% utilization: 4 jobs fill 2 servers, which draw 120 W for 8,760 h at
// 10 g/kWh = 2 x 10,512 g beyond the fleet footprint; with no base power the two are equal.
TEST(CaseStudyPaperModel, ServersRunningJobsAddTheirBasePower) {
  Fleet f;
  f.name = "hand";
  ServerPool p;
  p.name = "one";
  p.count = 4;
  p.resources = 10;
  p.score = 1000;
  p.max_w = 100;
  p.embodied_g = 50000;
  f.pools.push_back(p);
  CarbonSettings fleet_s;
  fleet_s.grid_g_per_kwh = 10;
  CarbonSettings paper_s = fleet_s;
  paper_s.footprint = CarbonSettings::Footprint::kPaper;
  paper_s.server_base_w = 120;
  const DemandGenerator half = [](uint64_t) { return 500.0; };
  const auto a = utilization_sweep(f, half, {0.5}, fleet_s);
  const auto b = utilization_sweep(f, half, {0.5}, paper_s);
  ASSERT_EQ(b[0].jobs, 4u);
  EXPECT_NEAR(b[0].footprint_g[0] - a[0].footprint_g[0], 2 * 10512.0, 1e-6);
  paper_s.server_base_w = 0;
  const auto c = utilization_sweep(f, half, {0.5}, paper_s);
  EXPECT_DOUBLE_EQ(c[0].footprint_g[0], a[0].footprint_g[0]);
}

TEST(CaseStudyPaperModel, ModelNamesParseAndPrint) {
  EXPECT_EQ(parse_footprint("paper", "--case-study-model"), CarbonSettings::Footprint::kPaper);
  EXPECT_STREQ(to_string(CarbonSettings::Footprint::kPaper), "paper");
  EXPECT_THROW(parse_footprint("idle", "--case-study-model"), lumos::InputError);
}

// The base power by hand: Table 4 totals 17,632.71 kg of embodied carbon and 74,045 W of TDP
// over 740 servers; embodied 20% of 5 years' emissions at 10 g/kWh (0.438 kg per W) needs
// 4 x 17,632.71 / 0.438 = 161,029 W, 86,984 W beyond the processors: 117.55 W a server.
TEST(CaseStudyPaperModel, TheBasePowerMakesEmbodiedCarbonAFifthOfLifecycleEmissions) {
  const Fleet f = load_fleet(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/mit-740.toml");
  EXPECT_NEAR(case_study_server_base_w(f), 117.55, 0.01);
  Fleet none = f;
  none.grid_g_per_kwh = -1;
  EXPECT_EQ(case_study_server_base_w(none), 0);
  Fleet dirty = f;
  dirty.grid_g_per_kwh = 1000;  // processors alone emit far more than 4x the embodied carbon
  EXPECT_EQ(case_study_server_base_w(dirty), 0);
}
