// The case study of "The Sunk Carbon Fallacy" (SoCC 2024; 740 servers, Table 4) against the
// figures the paper reports (its Figs. 7 and 8, §6): years in service, "nearly 30%" at the peak
// and > 5% from 27% to 78% utilization; embodied zeroed after 5 years, "nearly 30%" at the peak
// and > 10% from 13% to 80%. These tests hold what the `marginal` and `fleet` models of the case
// study (docs/guide/carbon.md, "The case study's model") reach, and what they do not, against
// those numbers, on the seeded job generator; case_study_paper_model_test.cpp holds the `paper`
// model's, the default.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "carbon/fleet.hpp"
#include "carbon/placement.hpp"
#include "host/carbon/case_study_curve.hpp"

using namespace lumos::carbon;

namespace {

using lumos::carbon::testing::Curve;

Curve case_study(Amortization a, CarbonSettings::Footprint footprint, double threshold) {
  const Fleet f = load_fleet(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/mit-740.toml");
  CarbonSettings s;
  s.grid_g_per_kwh = f.grid_g_per_kwh;
  s.amortization = a;
  s.footprint = footprint;
  std::vector<double> levels;
  for (int i = 0; i <= 100; ++i) levels.push_back(i / 100.0);
  return lumos::carbon::testing::curve_of(utilization_sweep(f, case_study_jobs(1), levels, s),
                                          threshold);
}

constexpr auto kMarginal = CarbonSettings::Footprint::kMarginal;
constexpr auto kFleet = CarbonSettings::Footprint::kFleet;

}  // namespace

// Fig. 7: the band is the paper's to within 5 points; the peak falls short of "nearly 30%".
TEST(CaseStudyPaper, YearsInServiceBandMatchesThePaperAndThePeakFallsShort) {
  const Curve c = case_study(Amortization::kYearsInService, kMarginal, 0.05);
  EXPECT_NEAR(c.band_from, 0.27, 0.05);
  EXPECT_NEAR(c.band_to, 0.78, 0.05);
  // Measured: +24.2% at 59% (where SCI has filled the 2014-2017 Xeons and oSCI the Gold-6326):
  // 6 points under the paper's 30%, outside its 3-point tolerance (docs/guide/carbon.md).
  EXPECT_NEAR(c.peak, 0.242, 0.01);
  EXPECT_NEAR(c.peak_at, 0.59, 0.02);
  EXPECT_LT(c.peak, 0.27) << "the paper's peak is now reproduced: update the guide and README";
}

// Fig. 8: the upper edge is the paper's; the curve rises at once instead of from 13%, because
// zeroing makes the 2016 E5-2640v4 the first SCI choice (0.632 vs the Silver-4216's 0.659 per
// score-year) while oSCI takes the Silver-4216 (0.425): +49% operational from the first job.
TEST(CaseStudyPaper, ZeroAfterLifetimeUpperEdgeMatchesAndTheLowLoadsDepart) {
  const Curve c = case_study(Amortization::kZeroAfterLifetime, kMarginal, 0.10);
  EXPECT_NEAR(c.band_to, 0.80, 0.05);
  EXPECT_LT(c.band_from, 0.03) << "the paper's 13% lower edge is now reproduced";
  EXPECT_NEAR(c.peak, 0.487, 0.01);
  EXPECT_LT(c.peak_at, 0.09);
}

// The fleet footprint (every server's amortized embodied carbon in both footprints): the same
// placements, a third of the paper's peak.
TEST(CaseStudyPaper, TheFleetFootprintPeaksNearElevenAndTwelvePercent) {
  const Curve yis = case_study(Amortization::kYearsInService, kFleet, 0.05);
  EXPECT_NEAR(yis.peak, 0.108, 0.005);
  EXPECT_NEAR(yis.band_from, 0.44, 0.02);
  EXPECT_NEAR(yis.band_to, 0.76, 0.02);
  const Curve zero = case_study(Amortization::kZeroAfterLifetime, kFleet, 0.10);
  EXPECT_NEAR(zero.peak, 0.125, 0.005);
}

// The two footprints differ only by the embodied carbon every placement pays: the carbon SCI
// adds, in grams, is the same under both.
TEST(CaseStudyPaper, BothFootprintsAddTheSameGrams) {
  const Fleet f = load_fleet(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/mit-740.toml");
  CarbonSettings fleet_s;
  fleet_s.grid_g_per_kwh = f.grid_g_per_kwh;
  CarbonSettings marginal_s = fleet_s;
  marginal_s.footprint = kMarginal;
  const std::vector<double> levels = {0.3, 0.6};
  const auto a = utilization_sweep(f, case_study_jobs(3), levels, fleet_s);
  const auto b = utilization_sweep(f, case_study_jobs(3), levels, marginal_s);
  for (size_t i = 0; i < levels.size(); ++i) {
    EXPECT_NEAR(a[i].footprint_g[1] - a[i].footprint_g[0],
                b[i].footprint_g[1] - b[i].footprint_g[0], 1e-6 * a[i].footprint_g[0]);
    EXPECT_GT(a[i].footprint_g[0] - b[i].footprint_g[0], 2.7e6) << "every server's embodied g/yr";
    EXPECT_GT(b[i].added_over_osci[1], a[i].added_over_osci[1]);
  }
}

// Why no model that fills server types in metric order can give both figures' upper edges: from
// 59% on, SCI has filled the same six types under both approaches, so the curves coincide, where
// the paper's years-in-service curve is under 5% at 78% and its zeroed one over 10% at 80%.
TEST(CaseStudyPaper, BothApproachesPlaceAlikeFromSixtyPercent) {
  const Fleet f = load_fleet(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/mit-740.toml");
  CarbonSettings yis;
  yis.grid_g_per_kwh = f.grid_g_per_kwh;
  yis.footprint = kMarginal;
  CarbonSettings zero = yis;
  zero.amortization = Amortization::kZeroAfterLifetime;
  const std::vector<double> levels = {0.2, 0.6, 0.7, 0.78, 0.8, 0.9};
  const auto a = utilization_sweep(f, case_study_jobs(1), levels, yis);
  const auto b = utilization_sweep(f, case_study_jobs(1), levels, zero);
  EXPECT_GT(b[0].added_over_osci[1], a[0].added_over_osci[1] + 0.05) << "they differ below";
  for (size_t i = 1; i < levels.size(); ++i)
    EXPECT_NEAR(a[i].added_over_osci[1], b[i].added_over_osci[1], 1e-9) << levels[i];
}
