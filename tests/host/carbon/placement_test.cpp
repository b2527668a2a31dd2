// Carbon metrics and placement against "The Sunk Carbon Fallacy" (SoCC 2024): its two-server
// Table 2, its fleet's Table 4, the tSCI worked example, and the amortization policies by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "carbon/embodied.hpp"
#include "carbon/fleet.hpp"
#include "carbon/placement.hpp"
#include "common/error.hpp"
#include "support/test_util.hpp"

using namespace lumos::carbon;
using lumos::testing::TempDir;

namespace {

std::string example(const std::string& name) {
  return std::string(LUMOS_EXAMPLES_DIR) + "/fleets/" + name;
}

double round2(double x) {
  return std::round(x * 100) / 100;
}

CarbonSettings settings_of(const Fleet& f, Amortization a = Amortization::kYearsInService) {
  CarbonSettings s;
  s.grid_g_per_kwh = f.grid_g_per_kwh;
  s.amortization = a;
  return s;
}

}  // namespace

TEST(Embodied, AmortizationPoliciesOnHandComputedCases) {
  // 1,000 kg over a 5-year lifetime.
  EXPECT_DOUBLE_EQ(embodied_g_per_year(1e6, 5, 3, Amortization::kLinear), 2e5);
  EXPECT_DOUBLE_EQ(embodied_g_per_year(1e6, 5, 8, Amortization::kLinear), 2e5);
  EXPECT_DOUBLE_EQ(embodied_g_per_year(1e6, 5, 5, Amortization::kZeroAfterLifetime), 2e5);
  EXPECT_DOUBLE_EQ(embodied_g_per_year(1e6, 5, 6, Amortization::kZeroAfterLifetime), 0);
  EXPECT_DOUBLE_EQ(embodied_g_per_year(1e6, 5, 3, Amortization::kYearsInService), 2e5);
  EXPECT_DOUBLE_EQ(embodied_g_per_year(1e6, 5, 8, Amortization::kYearsInService), 1.25e5);
  EXPECT_THROW(embodied_g_per_year(-1, 5, 1, Amortization::kLinear), lumos::InputError);
  EXPECT_THROW(embodied_g_per_year(1, 0, 1, Amortization::kLinear), lumos::InputError);
  EXPECT_THROW(parse_amortization("straight", "--amortization"), lumos::InputError);
}

// Table 2, in gCO2 per score-year: SCI 0.94 vs 1.01, tSCI 1.39 vs 1.12, oSCI 0.83 vs 0.56; SCI
// picks the old S_A, tSCI and oSCI the efficient S_B. The paper's +24.10% is 1.39 / 1.12 - 1 of
// its printed (two-decimal) values; unrounded, the same inputs give +23.93%.
TEST(ScoreYear, TheTwoServerExampleReproducesTable2) {
  const Fleet f = load_fleet(example("two-servers.toml"));
  const ScoreYearTable t = score_year_table(f, settings_of(f));
  ASSERT_EQ(t.rows.size(), 2u);
  const ScoreYearRow &a = t.rows[0], &b = t.rows[1];
  EXPECT_EQ(round2(a.sci), 0.94);
  EXPECT_EQ(round2(b.sci), 1.01);
  EXPECT_EQ(round2(a.tsci), 1.39);
  EXPECT_EQ(round2(b.tsci), 1.12);
  EXPECT_EQ(round2(a.osci), 0.83);
  EXPECT_EQ(round2(b.osci), 0.56);
  EXPECT_EQ(round2(a.m), 0.11);
  EXPECT_EQ(round2(b.m), 0.45);
  EXPECT_EQ(t.chosen[0], 1u) << "oSCI picks S_B";
  EXPECT_EQ(t.chosen[1], 0u) << "SCI picks S_A";
  EXPECT_EQ(t.chosen[2], 1u) << "tSCI picks S_B";
  EXPECT_EQ(round2(t.footprint[1]), 1.39);
  EXPECT_EQ(round2(t.footprint[0]), 1.12);
  const double printed =
      (round2(a.m) + round2(b.m) + round2(a.o)) / (round2(a.m) + round2(b.m) + round2(b.o)) - 1;
  EXPECT_EQ(std::floor(printed * 1e4) / 1e4, 0.2410);
  EXPECT_NEAR(t.added_over_osci[1], 0.2393, 5e-5);
  EXPECT_EQ(t.added_over_osci[2], 0);
}

// Table 4's M, O and SCI columns (gCO2 per score-year, 10 g/kWh, amortized over years since
// purchase, counted to 2024), within 0.005, in the table's order. Two rows of the table disagree
// with its own years: the E5-2640v3's M (0.183) amortizes over 9.5 years though it prints 2015
// (9 years), the E5335's (0.542) over 16 though it prints 2007 (17). lumos keeps the printed
// years; for those two rows the test checks the table's M at the age it implies.
TEST(ScoreYear, TheCaseStudyFleetReproducesTable4) {
  const Fleet f = load_fleet(example("mit-740.toml"));
  const ScoreYearTable t = score_year_table(f, settings_of(f));
  const double table[15][3] = {{0.234, 0.425, 0.659}, {0.289, 0.508, 0.797}, {0.194, 0.632, 0.826},
                               {0.183, 0.709, 0.892}, {0.096, 0.844, 0.939}, {0.209, 0.810, 1.019},
                               {0.573, 0.459, 1.032}, {0.251, 1.853, 2.104}, {0.253, 1.952, 2.205},
                               {0.312, 2.080, 2.392}, {0.253, 2.564, 2.818}, {0.343, 2.777, 3.120},
                               {0.365, 3.492, 3.857}, {0.542, 4.524, 5.066}, {0.639, 5.366, 6.005}};
  ASSERT_EQ(t.rows.size(), 15u);
  int64_t servers = 0;
  for (const ServerPool& p : f.pools) servers += p.count;
  EXPECT_EQ(servers, 740);
  for (size_t i = 0; i < 15; ++i) {
    const ServerPool& p = f.pools[i];
    double m = t.rows[i].m;
    if (p.name == "Xeon-E5-2640v3" || p.name == "Xeon-E5335") {
      const double implied_age = p.name == "Xeon-E5335" ? 16 : 9.5;
      EXPECT_GT(std::abs(m - table[i][0]), 0.005) << p.name << ": the table is consistent now";
      m = p.embodied_g / p.score / implied_age;
    }
    EXPECT_NEAR(m, table[i][0], 0.005) << p.name;
    EXPECT_NEAR(t.rows[i].o, table[i][1], 0.005) << p.name;
    EXPECT_NEAR(m + t.rows[i].o, table[i][2], 0.005) << p.name;
  }
}

// The paper's worked example: A (400 g, 10 years, 40 cores) runs J2 on 10 cores; J1 takes all 10
// cores of B (50 g, 5 years) for a year: tM(J1) = 10 g + 400 x 1/10 x 30/40 x 10/20 = 25 g.
TEST(Placement, TsciChargesTheIdleInfrastructureAsTheWorkedExample) {
  Fleet f;
  f.pools = {{"A", "", 1, 40, 0, 0, 0, 400, 0, 10}, {"B", "", 1, 10, 0, 0, 0, 50, 0, 5}};
  const std::vector<Job> jobs = {{"J2", {{0, 10, 8760, "A"}}}, {"J1", {{1, 10, 8760, "B"}}}};
  CarbonSettings s;
  s.grid_g_per_kwh = 0;
  s.amortization = Amortization::kLinear;
  const Placement p = place_jobs(f, jobs, Metric::kTsci, s);
  EXPECT_NEAR(p.metric_g[1], 25.0, 1e-12);
  EXPECT_NEAR(place_jobs(f, jobs, Metric::kSci, s).metric_g[1], 10.0, 1e-12);
  EXPECT_NEAR(p.embodied_g, 40 + 10, 1e-12) << "every server's year of embodied carbon";
}

// tSCI's operational part by hand: idle servers' base power, weighted by the job's usage share.
// Two pools of one 4-core server (100 W idle, 200 W full), 1,000 g/kWh, jobs of 2 cores for
// 1,000 h. J1 on A: O = 200 x 2/4 x 1 MWh-h = 100 kg; idle after it: 1.5 servers x 100 W x
// 1,000 h x usage 1 = 150 kg. J2 on B: O 100 kg; idle 1 server x 100 kWh x usage 2/4 = 50 kg.
TEST(Placement, TsciChargesIdleServersBasePowerByUsageShare) {
  Fleet f;
  f.pools = {{"A", "", 1, 4, 0, 100, 200, 0, 0, 5}, {"B", "", 1, 4, 0, 100, 200, 0, 0, 5}};
  const std::vector<Job> jobs = {{"J1", {{0, 2, 1000, "A"}}}, {"J2", {{1, 2, 1000, "B"}}}};
  CarbonSettings s;
  s.grid_g_per_kwh = 1000;
  const Placement p = place_jobs(f, jobs, Metric::kTsci, s);
  EXPECT_NEAR(p.metric_g[0], 100e3 + 150e3, 1e-6);
  EXPECT_NEAR(p.metric_g[1], 100e3 + 50e3, 1e-6);
  EXPECT_NEAR(p.operational_g, 200e3, 1e-6);
}

// A job's operational carbon is its energy times the intensity, and its energy is the reserved
// share of the servers' full power; the footprint is every server's embodied carbon plus the
// jobs' operational carbon, whatever the metric.
TEST(Placement, TheFootprintIsTheSumOfItsParts) {
  const Fleet f = load_fleet(example("two-servers.toml"));
  const CarbonSettings s = settings_of(f);
  const std::vector<Job> jobs(20, job_from_score(f, "j", 1168, 8760));
  // By hand: a job on S_B reserves 2 of its 64 cores at 205 W for a year, 56.1 kWh.
  EXPECT_NEAR(place_jobs(f, {jobs[0]}, Metric::kOsci, s).energy_kwh, 205.0 * 2 / 64 * 8.76, 1e-9);
  for (Metric m : kMetrics) {
    const Placement p = place_jobs(f, jobs, m, s);
    double energy = 0;
    for (size_t j = 0; j < jobs.size(); ++j)
      energy += option_carbon(f, jobs[j].options[p.option_of[j]], s).energy_kwh;
    EXPECT_NEAR(p.energy_kwh, energy, 1e-9);
    EXPECT_NEAR(p.operational_g, energy * s.grid_g_per_kwh, 1e-9);
    EXPECT_NEAR(p.footprint_g(), p.embodied_g + p.operational_g, 1e-9);
    EXPECT_NEAR(p.embodied_g, 8040.0 / 5 + 101890.0 / 5, 1e-9);
  }
}

// Fig. 2's claim: SCI adds carbon at every utilization strictly between 0% and 100%, and all
// metrics agree at the ends.
TEST(Placement, SciAddsCarbonOnlyBetweenEmptyAndFull) {
  const Fleet f = load_fleet(example("two-servers.toml"));
  std::vector<double> levels;
  for (int i = 0; i <= 20; ++i) levels.push_back(i / 20.0);
  const auto pts = utilization_sweep(
      f, [](uint64_t) { return 1168.0; }, levels, settings_of(f));
  ASSERT_EQ(pts.size(), levels.size());
  EXPECT_EQ(pts.front().added_over_osci[1], 0);
  double most = 0;
  for (const auto& p : pts) {
    EXPECT_GE(p.added_over_osci[1], -1e-12) << p.utilization;
    EXPECT_GE(p.added_over_osci[2], -1e-12) << p.utilization;
    most = std::max(most, p.added_over_osci[1]);
  }
  EXPECT_GT(most, 0.01);
  EXPECT_EQ(pts.back().jobs, 44u) << "12 on S_A and 32 on S_B";
  EXPECT_NEAR(pts.back().added_over_osci[1], 0, 1e-12);
  for (uint64_t u : pts.back().unplaced) EXPECT_EQ(u, 0u);
  // Whole cores take jobs of one size: the case-study mix is refused.
  EXPECT_THROW(utilization_sweep(f, case_study_jobs(1), levels, settings_of(f)), lumos::InputError);
}

TEST(Placement, TheCaseStudySweepRunsOnTheWholeFleetForBothPolicies) {
  const Fleet f = load_fleet(example("mit-740.toml"));
  for (Amortization a : {Amortization::kYearsInService, Amortization::kZeroAfterLifetime}) {
    const auto pts =
        utilization_sweep(f, case_study_jobs(1), {0, 0.25, 0.5, 0.75, 1}, settings_of(f, a));
    EXPECT_GT(pts[2].jobs, 1000u);
    EXPECT_NEAR(pts.back().utilization, 1.0, 1e-3);
    for (uint64_t u : pts.back().unplaced) EXPECT_LT(u, pts.back().jobs / 1000) << "fragments";
    EXPECT_NEAR(pts.back().added_over_osci[1], 0, 1e-3) << "a full fleet leaves no choice";
    EXPECT_GT(pts[2].added_over_osci[1], 0.0) << to_string(a);
    for (const auto& p : pts)
      if (p.utilization < 0.99) EXPECT_EQ(p.unplaced[1], 0u) << p.utilization;
  }
  // The generator: the paper's class shares, seeded and repeatable.
  const DemandGenerator g = case_study_jobs(7);
  int counts[4] = {};
  for (uint64_t n = 0; n < 100000; ++n) counts[static_cast<int>(g(n) / 300)]++;
  EXPECT_NEAR(counts[1] / 1e5, 0.131, 0.005);
  EXPECT_NEAR(counts[2] / 1e5, 0.689, 0.005);
  EXPECT_NEAR(counts[3] / 1e5, 0.182, 0.005);
  EXPECT_EQ(g(123), case_study_jobs(7)(123));
}

TEST(Placement, AJobThatFitsNowhereIsBadInput) {
  const Fleet f = load_fleet(example("two-servers.toml"));
  const std::vector<Job> jobs = {{"huge", {{0, 13, 10, "S_A"}, {1, 65, 10, "S_B"}}}};
  try {
    place_jobs(f, jobs, Metric::kOsci, settings_of(f));
    FAIL() << "expected InputError";
  } catch (const lumos::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("job huge fits on no server type"), std::string::npos);
  }
}

TEST(Fleet, BadFleetFilesNameTheLineAndField) {
  TempDir tmp;
  const std::string head = "[fleet]\nreference_year = 2024\n[[server]]\nname = \"x\"\n";
  const std::pair<std::string, std::string> cases[] = {
      {head + "count = 1\nresources = 8\nmax_w = -5\nembodied_kg = 1\nage_y = 1\n",
       ":7: max_w: expected a power in [0, 1000000] W, got -5"},
      {head + "count = 1\nresources = 8\nmax_w = 5\nembodied_kg = -1\nage_y = 1\n",
       ":8: embodied_kg: expected an embodied carbon in [0, 1000000] kg, got -1"},
      {head + "count = 0\nresources = 8\nmax_w = 5\nembodied_kg = 1\nage_y = 1\n",
       ":5: count: expected at least 1"},
      {head + "count = 1\nresources = 8\nembodied_kg = 1\nage_y = 1\n", "max_w: missing"},
      {head + "count = 1\nresources = 8\nmax_w = 5\nembodied_kg = 1\n",
       "give its age as age_y or year"},
      {head + "count = 1\nresources = 8\nmax_w = 5\nembodied_kg = 1\nage_y = 1\nwatts = 3\n",
       ":10: watts: unknown key in [[server]]"},
      {"[fleet]\nname = \"empty\"\n", "no [[server]] tables"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string path = tmp.write("f.toml", text);
    try {
      load_fleet(path);
      ADD_FAILURE() << "no error for:\n" << text;
    } catch (const lumos::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
          << e.what() << "\nexpected: " << expected;
    }
  }
}

// Buying, not owning: with procurement the footprint counts only the servers the jobs need, and
// SCI, which charges each job its hardware's embodied share, picks the placement that emits least
// in total (the old S_A is the better buy for one small job at this intensity); on owned
// hardware the same choice raises the total.
TEST(Placement, ProcurementCountsTheEmbodiedCarbonOfTheServersNeeded) {
  const Fleet f = load_fleet(example("two-servers.toml"));
  CarbonSettings s = settings_of(f);
  s.procurement = true;
  const std::vector<Job> jobs = {job_from_score(f, "one", 1168, 8760)};
  const Placement sci = place_jobs(f, jobs, Metric::kSci, s);
  const Placement osci = place_jobs(f, jobs, Metric::kOsci, s);
  EXPECT_EQ(sci.option_of[0], 0u) << "SCI buys S_A";
  EXPECT_EQ(osci.option_of[0], 1u) << "oSCI buys S_B";
  EXPECT_NEAR(sci.embodied_g, 8040.0 / 5, 1e-9) << "one S_A, a year of it";
  EXPECT_NEAR(osci.embodied_g, 101890.0 / 5, 1e-9) << "one S_B";
  EXPECT_LT(sci.footprint_g(), osci.footprint_g());
  s.procurement = false;
  EXPECT_GT(place_jobs(f, jobs, Metric::kSci, s).footprint_g(),
            place_jobs(f, jobs, Metric::kOsci, s).footprint_g());
}
