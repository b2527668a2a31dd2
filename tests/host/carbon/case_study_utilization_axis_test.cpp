// What the case study's utilization measures (docs/guide/carbon.md, "The case study's model").
// The paper does not say; lumos takes the demand placed over the fleet's total score, the one
// measure that is the same for both placements. Another measure (the share of the fleet's threads
// the jobs use, measured on one placement) reads the same curve on a stretched axis: the peaks
// keep their heights and only the band edges move. These tests hold, against lumos's own
// placements of the paper model, why no such axis closes both lower edges (the paper's 27% and
// 13%, each within 5 points): measured on SCI's placement, the years-in-service edge moves past
// 22% but the zeroed edge stays under 8%, and on oSCI's placement both move the wrong way.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "carbon/fleet.hpp"
#include "carbon/placement.hpp"

using namespace lumos::carbon;

namespace {

Fleet mit740() {
  return load_fleet(std::string(LUMOS_EXAMPLES_DIR) + "/fleets/mit-740.toml");
}

struct AxisPoint {
  double score_share = 0;  // demand placed / the fleet's total score (lumos's axis)
  double added = 0;        // what SCI adds over oSCI
  double osci_threads = 0, sci_threads = 0;  // the fleet's threads each placement uses
};

// The case-study jobs up to `level` of the fleet's score, placed by oSCI and by SCI under the
// paper model, as utilization_sweep places them.
AxisPoint at_level(const Fleet& f, Amortization a, double level) {
  CarbonSettings s;
  s.grid_g_per_kwh = f.grid_g_per_kwh;
  s.amortization = a;
  s.footprint = CarbonSettings::Footprint::kPaper;
  s.server_base_w = case_study_server_base_w(f);
  double total_score = 0, total_threads = 0;
  for (const ServerPool& p : f.pools) {
    total_score += static_cast<double>(p.count) * p.score;
    total_threads += static_cast<double>(p.count) * p.resources;
  }
  const DemandGenerator demand = case_study_jobs(1);
  std::vector<Job> jobs;
  double placed = 0;
  for (uint64_t n = 0; placed + demand(n) <= level * total_score; ++n) {
    jobs.push_back(job_from_score(f, "job", demand(n), kHoursPerYear));
    placed += demand(n);
  }
  const Placement osci = place_jobs(f, jobs, Metric::kOsci, s, kHoursPerYear);
  const Placement sci = place_jobs(f, jobs, Metric::kSci, s, kHoursPerYear);
  auto threads = [&](const Placement& p) {
    double used = 0;  // the mit-740 file's resources are threads
    for (double u : p.used) used += u;
    return used / total_threads;
  };
  AxisPoint out;
  out.score_share = placed / total_score;
  out.added = footprint_g(f, sci, s) / footprint_g(f, osci, s) - 1;
  out.osci_threads = threads(osci);
  out.sci_threads = threads(sci);
  return out;
}

// The first level, in steps of 0.1% of the fleet's score, where SCI adds more than `threshold`.
AxisPoint first_above(const Fleet& f, Amortization a, double threshold, int from_permille) {
  for (int i = from_permille; i <= 1000; ++i) {
    const AxisPoint p = at_level(f, a, i / 1000.0);
    if (p.added > threshold) return p;
  }
  return {};
}

}  // namespace

// Years in service: SCI passes 5% at 20.4% of the score (lumos's edge, 21%). SCI is filling the
// Silver-4116s there (611 score a thread, the fleet's average is 691), so on SCI's placement that
// is past 22% of the threads, inside the paper's 27 +/- 5; oSCI is filling the Gold-6326s (1,102 a
// thread), so on its placement it is under 21%, further out.
TEST(CaseStudyUtilizationAxis, ThreadsOnScisPlacementBringTheYearsInServiceEdgeIn) {
  const Fleet f = mit740();
  const AxisPoint p = first_above(f, Amortization::kYearsInService, 0.05, 190);
  EXPECT_GT(p.score_share, 0.20);
  EXPECT_LT(p.score_share, 0.21);
  EXPECT_GT(p.sci_threads, 0.22) << "SCI's placement: " << p.sci_threads;
  EXPECT_LT(p.osci_threads, 0.21) << "oSCI's placement: " << p.osci_threads;
}

// Zeroed after 5 years: SCI passes 10% at 5.9-6.0% of the score, on the E5-2640v4s (624 score a
// thread, only 10% under the fleet's average), and oSCI runs the Silver-4216s (644). On either
// placement that is under 7% of the threads, so the band's lower edge stays at 7% or earlier,
// outside the paper's 13 +/- 5, whichever placement measures the threads.
TEST(CaseStudyUtilizationAxis, NoThreadAxisMovesTheZeroedEdgePastSevenPercent) {
  const Fleet f = mit740();
  const AxisPoint p = first_above(f, Amortization::kZeroAfterLifetime, 0.10, 50);
  EXPECT_GT(p.score_share, 0.058);
  EXPECT_LT(p.score_share, 0.062);
  EXPECT_LT(p.sci_threads, 0.07) << "SCI's placement: " << p.sci_threads;
  EXPECT_LT(p.osci_threads, 0.07) << "oSCI's placement: " << p.osci_threads;
  EXPECT_GT(p.sci_threads, p.score_share) << "the E5-2640v4s hold less score a thread";
}
