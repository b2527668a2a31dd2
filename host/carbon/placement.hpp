// Placing jobs on a fleet by a carbon metric, and what each placement costs the fleet in total
// (The Sunk Carbon Fallacy, SoCC 2024, §3). The metrics, per job option (grams):
//   oSCI = O               O = energy x grid intensity; energy = the reserved share of the
//                          servers' power at full load (idle share included) x hours x PUE
//   SCI  = O + M           M = embodied g/yr (amortization) x years x reserved share
//   tSCI = SCI + the idle infrastructure's embodied carbon and idle power, each idle share
//          weighted by the job's share of all reserved resources (the paper's tM and tO)
// A placement is greedy and online: jobs in order, each on its option with the lowest metric
// among those that fit. The cluster footprint is what the fleet emits: the embodied carbon of
// every server over the horizon (sunk, the same whatever the placement) plus the operational
// carbon of the jobs.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "carbon/embodied.hpp"
#include "carbon/fleet.hpp"
#include "common/progress.hpp"

namespace lumos::carbon {

enum class Metric { kOsci, kSci, kTsci };
constexpr std::array<Metric, 3> kMetrics = {Metric::kOsci, Metric::kSci, Metric::kTsci};
const char* to_string(Metric m);

struct CarbonSettings {
  double grid_g_per_kwh = 0;
  Amortization amortization = Amortization::kYearsInService;
  // A procurement comparison: the fleet's server types are candidates to buy, not hardware
  // already owned, so a placement's footprint counts the embodied carbon of the servers its jobs
  // need (whole servers per type), not of every server listed. Only here does embodied carbon
  // belong in the decision (SCI).
  bool procurement = false;
  // What a utilization sweep's footprint counts (`lumos place --case-study-model`,
  // docs/guide/carbon.md "The case study's model"):
  //   kFleet     every server's amortized embodied carbon (sunk) + the jobs' operational carbon
  //   kMarginal  the jobs' operational carbon only: the carbon the placement decision changes.
  //              Embodied carbon is the same for every placement, so the difference between two
  //              placements is the same; the added share is taken over what the decision moves.
  //   kPaper     kFleet + the base power of every server running jobs (`server_base_w` each,
  //              drawn whatever its load): the paper's cluster footprint with servers that are
  //              not power proportional, powered off when they run nothing.
  enum class Footprint { kFleet, kMarginal, kPaper };
  Footprint footprint = Footprint::kFleet;
  // kPaper: what a server draws beyond its processor's share, at any load (W).
  double server_base_w = 0;
};

// The paper's case study chose its grid intensity, 10 gCO2/kWh, "so embodied carbon is 20% of
// lifecycle emissions"; with processors alone at TDP (Table 4's operational column) that share is
// 35%. The paper model takes the rest of a server's power as a base power drawn whatever the
// load, the same for every server (the paper: servers draw over 30% of their peak at 0%
// utilization), sized so that the fleet's embodied carbon is that 20% of its emissions over the
// servers' lifetimes at the fleet file's intensity: 117.5 W on the 740-server fleet
// (docs/guide/carbon.md, "The case study's model"). 0 when the fleet gives no intensity, or its
// processors alone already emit enough.
constexpr double kCaseStudyEmbodiedShare = 0.2;
double case_study_server_base_w(const Fleet& f);

// "paper" | "fleet" | "marginal" (the case study's model). Throws InputError naming `what`.
CarbonSettings::Footprint parse_footprint(const std::string& text, const std::string& what);
const char* to_string(CarbonSettings::Footprint f);

// An option's own terms: energy (kWh, PUE included), O and M (grams).
struct OptionCarbon {
  double energy_kwh = 0, operational_g = 0, embodied_g = 0;
};
OptionCarbon option_carbon(const Fleet& f, const JobOption& o, const CarbonSettings& s);

struct Placement {
  Metric metric = Metric::kOsci;
  std::vector<size_t> option_of;  // per job, the index of its chosen option (SIZE_MAX: unplaced)
  uint64_t unplaced = 0;          // jobs that fit nowhere (skip_unfit)
  std::vector<double> metric_g;   // per job, the chosen option's metric when it was placed
  std::vector<double> used;       // per pool, resources reserved
  double horizon_h = 0;
  double energy_kwh = 0;
  double embodied_g = 0;     // every server over the horizon (sunk); procurement: those needed
  double operational_g = 0;  // the jobs'
  double footprint_g() const { return embodied_g + operational_g; }
};

// Caps on a placement's size, checked before its jobs are built (docs/design.md, caps before
// work): jobs placed at once, and the work of placing them (each job looks at every server type
// for tSCI's idle share and at each of its options), over every placement of the run.
constexpr double kMaxPlacedJobs = 1e6;
constexpr double kMaxPlacementWork = 1e9;

// Throws InputError (one line naming `what` and the cap) when `jobs` jobs with `options` options
// in all, each placement done `placements` times, would pass a cap.
void check_placement_size(const Fleet& f, double jobs, double options, double placements,
                          const std::string& what);

// Throws InputError naming the job when it fits on no pool, unless `skip_unfit` (then the job is
// left out and counted in `unplaced`). `horizon_h` 0: the longest option of any job; callers
// comparing metrics pass one horizon to all (lumos place: the longest option any metric chose).
// tSCI depends on the order: a job charged the idle infrastructure shares it with the jobs
// placed before it (the first job, with a usage fraction of 1, is charged all of it).
Placement place_jobs(const Fleet& f, const std::vector<Job>& jobs, Metric m,
                     const CarbonSettings& s, double horizon_h = 0, bool skip_unfit = false);

// The jobs placed by every metric (kMetrics order), each footprint over one horizon: the longest
// run any metric chose (the choices do not depend on it), so that the footprints compare.
std::vector<Placement> place_by_every_metric(const Fleet& f, const std::vector<Job>& jobs,
                                             const CarbonSettings& s);

// The paper's per-score-year comparison of servers (its Tables 2 and 4), one row per pool: one
// year of a whole server's work per unit of its score, in gCO2 per score-year.
struct ScoreYearRow {
  std::string name;
  double m = 0, o = 0;  // embodied and operational
  double sci = 0, tsci = 0, osci = 0;
};
struct ScoreYearTable {
  std::vector<ScoreYearRow> rows;
  // Per metric (kMetrics order): the pool it picks, the cluster footprint (every pool's m plus
  // the chosen pool's o) and how much more that is than oSCI's.
  std::array<size_t, 3> chosen{};
  std::array<double, 3> footprint{};
  std::array<double, 3> added_over_osci{};
};
// Throws InputError when a pool has no score.
ScoreYearTable score_year_table(const Fleet& f, const CarbonSettings& s);

// Jobs for a utilization sweep: the n-th job's demand in benchmark score.
using DemandGenerator = std::function<double(uint64_t n)>;

// The paper's case-study workload (its §3, "Workload"): one thread per job, of virtual-core class
// VC1 (13.1%), VC2 (68.9%) or VC3 (18.2%), VC2 and VC3 two and three times VC1's score
// (`vc1_score`), drawn with a seeded generator.
DemandGenerator case_study_jobs(uint64_t seed, double vc1_score = 300);

// A placement's footprint as `s.footprint` counts it (kFleet: the placement's own).
double footprint_g(const Fleet& f, const Placement& p, const CarbonSettings& s);

struct UtilizationPoint {
  double utilization = 0;  // demand offered / the fleet's capacity
  uint64_t jobs = 0;
  // Jobs that fit on no single server type once the fleet is nearly full (a job cannot be
  // split across types), per metric.
  std::array<uint64_t, 3> unplaced{};
  std::array<double, 3> footprint_g{};  // kMetrics order; what CarbonSettings::footprint counts
  std::array<double, 3> added_over_osci{};
};

constexpr double kHoursPerYear = 8760;

// For each level: jobs of `demand` (the same sequence at every level) until the next would pass
// level x the fleet's capacity, each running `hours`, placed by every metric. The capacity is the
// fleet's total score, or, with whole resources, the score of the jobs of the first job's size
// that fit (the paper's two servers hold 44 jobs of 1168: 12 on S_A, 32 on S_B).
std::vector<UtilizationPoint> utilization_sweep(const Fleet& f, const DemandGenerator& demand,
                                                const std::vector<double>& levels,
                                                const CarbonSettings& s,
                                                double hours = kHoursPerYear,
                                                const ProgressFn& progress = {});

}  // namespace lumos::carbon
