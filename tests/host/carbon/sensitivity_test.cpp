// What SCI's choice adds as the grid intensity and the lifetime vary (the paper's Figs. 3 and 4),
// on its two servers (Table 1), against values computed by hand from the formulas.
#include <gtest/gtest.h>

#include <string>

#include "carbon/fleet.hpp"
#include "carbon/sensitivity.hpp"
#include "common/error.hpp"

using namespace lumos::carbon;

namespace {

Fleet two_servers() {
  return load_fleet(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/two-servers.toml");
}

CarbonSettings reference(const Fleet& f) {
  CarbonSettings s;
  s.grid_g_per_kwh = f.grid_g_per_kwh;  // 13.9
  return s;
}

// Per score-year, by hand: M = embodied g / lifetime / score, O = W x 8.76 kWh/W-yr x I / score.
double m_a(double life) {
  return 8040.0 / life / 14020;
}
double m_b(double life) {
  return 101890.0 / life / 44895;
}
double o_a(double i) {
  return 95 * 8.76 * i / 14020;
}
double o_b(double i) {
  return 205 * 8.76 * i / 44895;
}

}  // namespace

TEST(Sensitivity, GridIntensityPointsMatchTheFormulas) {
  const Fleet f = two_servers();
  const SensitivitySweep w =
      sensitivity_sweep(f, reference(f), SweepParameter::kGridIntensity, {0, 13.9, 600});
  EXPECT_EQ(f.pools[w.reference_pick].name, "S_A");
  const double m = m_a(5) + m_b(5);
  // 13.9 g/kWh: Table 2, SCI on S_A costs +23.93%.
  EXPECT_EQ(f.pools[w.points[1].sci_pick].name, "S_A");
  EXPECT_NEAR(w.points[1].added_sci, (m + o_a(13.9)) / (m + o_b(13.9)) - 1, 1e-12);
  EXPECT_NEAR(w.points[1].added_sci, 0.2393, 5e-5);
  EXPECT_NEAR(w.points[1].embodied_share, m / (m + o_a(13.9) + o_b(13.9)), 1e-12);
  // 600 g/kWh: SCI now picks S_B; running on S_A still costs (m + O_A) / (m + O_B) - 1.
  EXPECT_EQ(f.pools[w.points[2].sci_pick].name, "S_B");
  EXPECT_EQ(w.points[2].added_sci, 0);
  EXPECT_NEAR(w.points[2].added_reference_pick, (m + o_a(600)) / (m + o_b(600)) - 1, 1e-12);
  // No operational carbon: nothing to add, and the embodied share is 1.
  EXPECT_EQ(w.points[0].added_reference_pick, 0);
  EXPECT_DOUBLE_EQ(w.points[0].embodied_share, 1);
}

// Fig. 3: the less embodied carbon weighs (a dirtier grid), the more running on S_A costs, up
// to S_A's energy per score over S_B's, +48% (the paper's figure for a 0% embodied share).
TEST(Sensitivity, RunningOnTheOldServerCostsMoreAsTheGridGetsDirtier) {
  const Fleet f = two_servers();
  std::vector<double> values;
  for (int i = 0; i <= 60; ++i) values.push_back(10.0 * i);
  const SensitivitySweep w =
      sensitivity_sweep(f, reference(f), SweepParameter::kGridIntensity, values);
  for (size_t i = 1; i < w.points.size(); ++i) {
    EXPECT_GT(w.points[i].added_reference_pick, w.points[i - 1].added_reference_pick);
    EXPECT_LT(w.points[i].embodied_share, w.points[i - 1].embodied_share);
  }
  const double limit = o_a(1) / o_b(1) - 1;
  EXPECT_NEAR(limit, 0.484, 0.001);
  EXPECT_LT(w.points.back().added_reference_pick, limit);
  EXPECT_GT(w.points.back().added_reference_pick, 0.46);
  // SCI itself switches to S_B once O_A - O_B outweighs M_B - M_A: 17.5 g/kWh.
  const double crossover = (m_b(5) - m_a(5)) / (o_a(1) - o_b(1));
  EXPECT_NEAR(crossover, 17.52, 0.01);
  for (const SensitivityPoint& p : w.points)
    EXPECT_EQ(f.pools[p.sci_pick].name, p.value < crossover ? "S_A" : "S_B") << p.value;
}

// Fig. 4: a longer lifetime spreads embodied carbon thinner, and the sunk-carbon penalty grows.
TEST(Sensitivity, ALongerLifetimeMakesTheOldServerCostMore) {
  const Fleet f = two_servers();
  std::vector<double> values;
  for (int l = 3; l <= 12; ++l) values.push_back(l);
  const SensitivitySweep w = sensitivity_sweep(f, reference(f), SweepParameter::kLifetime, values);
  for (size_t i = 1; i < w.points.size(); ++i)
    EXPECT_GT(w.points[i].added_reference_pick, w.points[i - 1].added_reference_pick);
  // 10 years, by hand; S_A (2019) is 5 years old, so years in service = the lifetime from 5 on.
  const SensitivityPoint& ten = w.points[7];
  ASSERT_EQ(ten.value, 10);
  const double m = m_a(10) + m_b(10);
  EXPECT_NEAR(ten.added_reference_pick, (m + o_a(13.9)) / (m + o_b(13.9)) - 1, 1e-12);
  // 3 years: S_A is amortized over its 5 years in service, S_B over 3.
  const double m3 = m_a(5) + m_b(3);
  EXPECT_NEAR(w.points[0].added_reference_pick, (m3 + o_a(13.9)) / (m3 + o_b(13.9)) - 1, 1e-12);
}

TEST(Sensitivity, BadRangesAreInputErrors) {
  const Fleet f = two_servers();
  EXPECT_THROW(parse_sweep_values("0:600", "--sweep-grid-intensity", 0, 1e4), lumos::InputError);
  EXPECT_THROW(parse_sweep_values("10:0:1", "--sweep-grid-intensity", 0, 1e4), lumos::InputError);
  EXPECT_THROW(parse_sweep_values("0:10:0", "--sweep-lifetime", 0, 100), lumos::InputError);
  EXPECT_THROW(parse_sweep_values("0:1e9:1", "--sweep-lifetime", 0, 100), lumos::InputError);
  EXPECT_EQ(parse_sweep_values("3:12:1", "--sweep-lifetime", 0, 100).size(), 10u);
  EXPECT_THROW(sensitivity_sweep(f, reference(f), SweepParameter::kLifetime, {0}),
               lumos::InputError);
}
