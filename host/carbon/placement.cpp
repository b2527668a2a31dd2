#include "carbon/placement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "common/format.hpp"
#include "common/physical_ranges.hpp"

namespace lumos::carbon {

namespace {

// Hardware bought for the job is new, whatever the fleet file says of servers already owned.
double rate_g_per_year(const ServerPool& p, const CarbonSettings& s) {
  return embodied_g_per_year(p.embodied_g, p.lifetime_y, s.procurement ? 0 : p.age_y,
                             s.amortization);
}

// Capacity checks and level limits share one relative tolerance for sums of fractions.
constexpr double kFitTolerance = 1e-9;

// Every number a report prints is finite, or the run is refused naming it: the inputs' ranges
// keep them so, and this is the check that nothing overflowed between (docs/design.md).
void expect_finite(const Placement& p) {
  const std::string by = std::string("place: the placement by ") + to_string(p.metric) + ": ";
  expect_finite_result(p.energy_kwh, by + "energy");
  expect_finite_result(p.operational_g, by + "operational carbon");
  expect_finite_result(p.embodied_g, by + "embodied carbon");
  expect_finite_result(p.footprint_g(), by + "footprint");
  for (double g : p.metric_g) expect_finite_result(g, by + "a job's carbon");
}

}  // namespace

const char* to_string(Metric m) {
  switch (m) {
    case Metric::kOsci:
      return "oSCI";
    case Metric::kSci:
      return "SCI";
    case Metric::kTsci:
      return "tSCI";
  }
  return "?";
}

OptionCarbon option_carbon(const Fleet& f, const JobOption& o, const CarbonSettings& s) {
  const ServerPool& p = f.pools.at(o.pool);
  const double share = o.resources / p.resources;  // servers' worth reserved
  OptionCarbon c;
  c.energy_kwh = p.max_w * share * o.hours / 1000.0 * f.pue;
  c.operational_g = c.energy_kwh * s.grid_g_per_kwh;
  c.embodied_g = rate_g_per_year(p, s) * o.hours / kHoursPerYear * share;
  return c;
}

void check_placement_size(const Fleet& f, double jobs, double options, double placements,
                          const std::string& what) {
  LUMOS_EXPECT(jobs <= kMaxPlacedJobs, what + ": " + strprintf("%.0f", jobs) + " jobs; at most " +
                                           strprintf("%.0f", kMaxPlacedJobs) +
                                           " are placed at once");
  const double work = placements * (jobs * static_cast<double>(f.pools.size()) + options);
  LUMOS_EXPECT(work <= kMaxPlacementWork,
               what + ": " + strprintf("%.0f", jobs) + " jobs on " +
                   std::to_string(f.pools.size()) + " server types, placed " +
                   strprintf("%.0f", placements) + " times, is " + strprintf("%.3g", work) +
                   " job-options of work; at most " + strprintf("%.0f", kMaxPlacementWork) +
                   " (fewer jobs, server types or levels)");
}

Placement place_jobs(const Fleet& f, const std::vector<Job>& jobs, Metric m,
                     const CarbonSettings& s, double horizon_h, bool skip_unfit) {
  Placement out;
  out.metric = m;
  const size_t pools = f.pools.size();
  out.used.assign(pools, 0.0);
  std::vector<double> capacity(pools), rate(pools);
  for (size_t k = 0; k < pools; ++k) {
    capacity[k] = static_cast<double>(f.pools[k].count) * f.pools[k].resources;
    rate[k] = rate_g_per_year(f.pools[k], s);
  }
  if (horizon_h <= 0)
    for (const Job& j : jobs)
      for (const JobOption& o : j.options) horizon_h = std::max(horizon_h, o.hours);
  out.horizon_h = horizon_h;
  double used_total = 0;
  for (const Job& j : jobs) {
    // The idle infrastructure before this job: servers' worth of idle resources, weighted by
    // their embodied rate and by their idle power (tSCI's tM and tO).
    double idle_embodied = 0, idle_power_w = 0;
    if (m == Metric::kTsci)
      for (size_t k = 0; k < pools; ++k) {
        const double idle_servers = (capacity[k] - out.used[k]) / f.pools[k].resources;
        idle_embodied += rate[k] * idle_servers;
        idle_power_w += f.pools[k].idle_w * idle_servers;
      }
    size_t best = SIZE_MAX;
    double best_value = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < j.options.size(); ++i) {
      const JobOption& o = j.options[i];
      const size_t k = o.pool;
      if (out.used[k] + o.resources > capacity[k] * (1 + kFitTolerance)) continue;
      const OptionCarbon c = option_carbon(f, o, s);
      double value = c.operational_g;
      if (m != Metric::kOsci) value += c.embodied_g;
      if (m == Metric::kTsci) {
        const double taken = o.resources / f.pools[k].resources;  // no longer idle
        const double usage = o.resources / (used_total + o.resources);
        value += usage * ((idle_embodied - rate[k] * taken) * o.hours / kHoursPerYear +
                          (idle_power_w - f.pools[k].idle_w * taken) * o.hours / 1000.0 * f.pue *
                              s.grid_g_per_kwh);
      }
      if (value < best_value) best_value = value, best = i;
    }
    if (best == SIZE_MAX && skip_unfit) {
      ++out.unplaced;
      out.option_of.push_back(SIZE_MAX);
      out.metric_g.push_back(0);
      continue;
    }
    LUMOS_EXPECT(best != SIZE_MAX, "place: job " + j.name + " fits on no server type (" +
                                       std::to_string(j.options.size()) +
                                       " options, every pool too small or full)");
    const JobOption& o = j.options[best];
    out.used[o.pool] += o.resources;
    used_total += o.resources;
    const OptionCarbon c = option_carbon(f, o, s);
    out.energy_kwh += c.energy_kwh;
    out.operational_g += c.operational_g;
    out.option_of.push_back(best);
    out.metric_g.push_back(best_value);
  }
  for (size_t k = 0; k < pools; ++k) {
    const double servers = s.procurement
                               ? std::ceil(out.used[k] / f.pools[k].resources * (1 - 1e-12))
                               : static_cast<double>(f.pools[k].count);
    out.embodied_g += servers * rate[k] * out.horizon_h / kHoursPerYear;
  }
  return out;
}

std::vector<Placement> place_by_every_metric(const Fleet& f, const std::vector<Job>& jobs,
                                             const CarbonSettings& s) {
  double options = 0;
  for (const Job& j : jobs) options += static_cast<double>(j.options.size());
  // Each metric places the jobs twice: once to find the horizon, once over it.
  check_placement_size(f, static_cast<double>(jobs.size()), options, 2.0 * kMetrics.size(),
                       "place");
  double horizon_h = 0;
  for (Metric m : kMetrics) {
    const Placement p = place_jobs(f, jobs, m, s);
    for (size_t j = 0; j < jobs.size(); ++j)
      horizon_h = std::max(horizon_h, jobs[j].options[p.option_of[j]].hours);
  }
  std::vector<Placement> out;
  for (Metric m : kMetrics) out.push_back(place_jobs(f, jobs, m, s, horizon_h));
  for (const Placement& p : out) expect_finite(p);
  return out;
}

ScoreYearTable score_year_table(const Fleet& f, const CarbonSettings& s) {
  LUMOS_EXPECT(!f.pools.empty(), "place: the fleet has no server type");
  ScoreYearTable t;
  std::vector<double> idle_o;
  for (const ServerPool& p : f.pools) {
    LUMOS_EXPECT(p.score > 0,
                 "place: server " + p.name + " has no score (per-score-year values " + "need one)");
    ScoreYearRow r;
    r.name = p.name;
    r.m = rate_g_per_year(p, s) / p.score;
    const double g_per_w_year = kHoursPerYear / 1000.0 * f.pue * s.grid_g_per_kwh;
    r.o = p.max_w * g_per_w_year / p.score;
    idle_o.push_back(p.idle_w * g_per_w_year / p.score);
    r.sci = r.m + r.o;
    r.osci = r.o;
    t.rows.push_back(r);
  }
  double all_m = 0, all_idle = 0;
  for (size_t k = 0; k < t.rows.size(); ++k)
    all_m += t.rows[k].m, all_idle += t.rows[k].m + idle_o[k];
  for (size_t k = 0; k < t.rows.size(); ++k)
    t.rows[k].tsci = t.rows[k].sci + all_idle - (t.rows[k].m + idle_o[k]);
  for (size_t i = 0; i < kMetrics.size(); ++i) {
    auto value = [&](const ScoreYearRow& r) {
      return kMetrics[i] == Metric::kOsci ? r.osci : kMetrics[i] == Metric::kSci ? r.sci : r.tsci;
    };
    for (size_t k = 1; k < t.rows.size(); ++k)
      if (value(t.rows[k]) < value(t.rows[t.chosen[i]])) t.chosen[i] = k;
    t.footprint[i] = all_m + t.rows[t.chosen[i]].o;
  }
  for (size_t i = 0; i < kMetrics.size(); ++i)
    t.added_over_osci[i] = t.footprint[0] > 0 ? t.footprint[i] / t.footprint[0] - 1 : 0;
  for (const ScoreYearRow& r : t.rows)
    for (double v : {r.m, r.o, r.sci, r.tsci, r.osci})
      expect_finite_result(v, "place --score-year: server " + r.name + "'s gCO2 per score-year");
  for (size_t i = 0; i < kMetrics.size(); ++i)
    expect_finite_result(
        t.footprint[i] + t.added_over_osci[i],
        std::string("place --score-year: the cluster footprint by ") + to_string(kMetrics[i]));
  return t;
}

DemandGenerator case_study_jobs(uint64_t seed, double vc1_score) {
  return [seed, vc1_score](uint64_t n) {
    // splitmix64 of (seed, n): the same job at the same position whatever the levels asked.
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL + (n + 1) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    const double vc = u < 0.131 ? 1 : u < 0.131 + 0.689 ? 2 : 3;
    return vc * vc1_score;
  };
}

std::vector<UtilizationPoint> utilization_sweep(const Fleet& f, const DemandGenerator& demand,
                                                const std::vector<double>& levels,
                                                const CarbonSettings& s, double hours,
                                                const ProgressFn& progress) {
  double total_score = 0;
  for (const ServerPool& p : f.pools) {
    LUMOS_EXPECT(p.score > 0, "place --utilization: server " + p.name + " has no score");
    total_score += static_cast<double>(p.count) * p.score;
  }
  if (f.whole_resources) {
    // Capacity in jobs of one size: a fleet of whole cores takes jobs of one size only.
    for (uint64_t n = 1; n < 64; ++n)
      LUMOS_EXPECT(demand(n) == demand(0),
                   "place --utilization: a fleet of whole resources "
                   "(whole_resources = true) takes jobs of one size "
                   "(--job-score), not the case-study mix");
    const Job first = job_from_score(f, "job 0", demand(0), hours);
    double slots = 0;
    for (const JobOption& o : first.options)
      slots += static_cast<double>(f.pools[o.pool].count) *
               std::floor(f.pools[o.pool].resources / o.resources + 1e-9);
    total_score = slots * demand(0);
  }
  LUMOS_EXPECT(total_score > 0, "place --utilization: no server of the fleet fits one job");
  // The jobs every level needs, from the smallest demand, checked before any is built: a fleet
  // of billions of score units and a tiny job is refused at once, not after minutes.
  double smallest = HUGE_VAL;
  for (uint64_t n = 0; n < 64; ++n) smallest = std::min(smallest, demand(n));
  double jobs_at_top = 0, jobs_in_all = 0;
  for (double level : levels) {
    const double n = std::floor(level * total_score * (1 + kFitTolerance) / smallest);
    jobs_at_top = std::max(jobs_at_top, n);
    jobs_in_all += n;
  }
  // Each job has at most one option per server type.
  check_placement_size(f, jobs_at_top, 0, 1, "place --utilization");
  check_placement_size(f, jobs_in_all / static_cast<double>(std::max<size_t>(levels.size(), 1)),
                       jobs_in_all * static_cast<double>(f.pools.size()) /
                           static_cast<double>(std::max<size_t>(levels.size(), 1)),
                       static_cast<double>(levels.size() * kMetrics.size()), "place --utilization");
  std::vector<UtilizationPoint> out;
  for (double level : levels) {
    LUMOS_EXPECT(level >= 0 && level <= 1,
                 "place --utilization: levels must lie in [0, 1], got " + std::to_string(level));
    std::vector<Job> jobs;
    double placed = 0;
    // Up to the level, within the fit tolerance: rounding must not drop the last job of a full
    // fleet.
    const double limit = level * total_score * (1 + kFitTolerance);
    for (uint64_t n = 0;; ++n) {
      const double d = demand(n);
      if (placed + d > limit) break;
      // The estimate above takes its smallest demand from a sample; this holds whatever comes.
      if (static_cast<double>(n) >= kMaxPlacedJobs)
        check_placement_size(f, static_cast<double>(n) + 1, 0, 1, "place --utilization");
      jobs.push_back(job_from_score(f, "job " + std::to_string(n), d, hours));
      placed += d;
    }
    UtilizationPoint pt;
    pt.utilization = placed / total_score;
    pt.jobs = jobs.size();
    for (size_t i = 0; i < kMetrics.size(); ++i) {
      const Placement p = place_jobs(f, jobs, kMetrics[i], s, hours, true);
      pt.footprint_g[i] = footprint_g(f, p, s);
      pt.unplaced[i] = p.unplaced;
    }
    for (size_t i = 0; i < kMetrics.size(); ++i) {
      pt.added_over_osci[i] = pt.footprint_g[0] > 0 ? pt.footprint_g[i] / pt.footprint_g[0] - 1 : 0;
      expect_finite_result(
          pt.footprint_g[i] + pt.added_over_osci[i],
          std::string("place --utilization: the footprint by ") + to_string(kMetrics[i]));
    }
    out.push_back(pt);
    if (progress) progress(out.size(), levels.size());
  }
  return out;
}

}  // namespace lumos::carbon
