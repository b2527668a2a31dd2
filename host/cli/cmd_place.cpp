// lumos place: jobs placed on a fleet by each carbon metric (oSCI, SCI, tSCI), the fleet's total
// carbon under each, the paper's per-score-year tables, and utilization sweeps (host/carbon/).
#include <cxxopts.hpp>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "carbon/fleet.hpp"
#include "carbon/placement.hpp"
#include "cli/commands.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/line_chart_svg.hpp"

namespace lumos::cli {
namespace {

using namespace lumos::carbon;

// "0:1:0.05" -> 0, 0.05, ..., 1 (the end included when the step reaches it).
std::vector<double> parse_levels(const std::string& text) {
  const std::string what = "--utilization " + text;
  std::vector<double> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == ':') {
      const std::optional<double> v = parse_finite(text.substr(start, i - start));
      LUMOS_EXPECT(v.has_value(), what + ": expected FROM:TO:STEP, e.g. 0:1:0.05");
      parts.push_back(*v);
      start = i + 1;
    }
  LUMOS_EXPECT(parts.size() == 3, what + ": expected FROM:TO:STEP, e.g. 0:1:0.05");
  const double from = parts[0], to = parts[1], step = parts[2];
  LUMOS_EXPECT(from >= 0 && to <= 1 && from <= to, what + ": levels lie in [0, 1], FROM <= TO");
  LUMOS_EXPECT(step > 0 && (to - from) / step <= 10000, what +
                                                            ": STEP must be positive (at most "
                                                            "10,000 levels)");
  std::vector<double> out;
  for (int64_t i = 0;; ++i) {
    const double v = from + static_cast<double>(i) * step;
    if (v > to + 1e-9) break;
    out.push_back(std::min(v, to));
  }
  return out;
}

double kg(double g) {
  return g / 1000.0;
}

void placements_text(const Fleet& f, const std::vector<Job>& jobs, const std::vector<Placement>& ps,
                     const CarbonSettings& s) {
  std::cout << strprintf(
      "lumos place: fleet %s (%zu server types), %zu jobs, grid %.4g gCO2/kWh, PUE %.3g, "
      "embodied amortized %s over %.0f h%s\n",
      f.name.c_str(), f.pools.size(), jobs.size(), s.grid_g_per_kwh, f.pue,
      to_string(s.amortization), ps[0].horizon_h,
      s.procurement ? "; procurement: embodied carbon of the servers the jobs need" : "");
  std::cout << "  metric  footprint kg  embodied kg (" << (s.procurement ? "bought" : "sunk")
            << ")  operational kg  energy kWh  vs oSCI\n";
  for (const Placement& p : ps)
    std::cout << strprintf("  %-6s %13.3f %19.3f %15.3f %11.1f  %+6.2f%%\n", to_string(p.metric),
                           kg(p.footprint_g()), kg(p.embodied_g), kg(p.operational_g), p.energy_kwh,
                           100 * (p.footprint_g() / ps[0].footprint_g() - 1));
  std::cout << "  placements (metric value when placed, kgCO2):\n";
  for (size_t j = 0; j < jobs.size() && j < 50; ++j) {
    std::cout << strprintf("  %-20s", jobs[j].name.c_str());
    for (const Placement& p : ps)
      std::cout << strprintf("  %s: %s (%.3f)", to_string(p.metric),
                             jobs[j].options[p.option_of[j]].label.c_str(), kg(p.metric_g[j]));
    std::cout << '\n';
  }
  if (jobs.size() > 50) std::cout << strprintf("  ... %zu more jobs\n", jobs.size() - 50);
}

void placements_json(const Fleet& f, const std::vector<Job>& jobs, const std::vector<Placement>& ps,
                     const CarbonSettings& s) {
  common::JsonWriter w(std::cout);
  w.begin_object().field("fleet", f.name).field("grid_g_per_kwh", s.grid_g_per_kwh);
  w.field("pue", f.pue).field("amortization", to_string(s.amortization));
  w.field("procurement", s.procurement);
  w.field("horizon_h", ps[0].horizon_h).key("metrics").begin_array();
  for (const Placement& p : ps) {
    w.begin_object().field("metric", to_string(p.metric));
    w.field("footprint_g", p.footprint_g()).field("embodied_g", p.embodied_g);
    w.field("operational_g", p.operational_g).field("energy_kwh", p.energy_kwh);
    w.field("added_over_osci", p.footprint_g() / ps[0].footprint_g() - 1);
    w.key("jobs").begin_array();
    for (size_t j = 0; j < jobs.size(); ++j) {
      const JobOption& o = jobs[j].options[p.option_of[j]];
      w.begin_object().field("job", jobs[j].name).field("server", f.pools[o.pool].name);
      w.field("option", o.label).field("resources", o.resources).field("hours", o.hours);
      w.field("metric_g", p.metric_g[j]).end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
  std::cout << '\n';
}

void score_year_text(const Fleet& f, const ScoreYearTable& t, const CarbonSettings& s) {
  std::cout << strprintf(
      "lumos place --score-year: fleet %s, grid %.4g gCO2/kWh, PUE %.3g, embodied amortized %s "
      "(gCO2 per score-year; one server per type)\n",
      f.name.c_str(), s.grid_g_per_kwh, f.pue, to_string(s.amortization));
  std::cout << "  server                    M       O     SCI    tSCI    oSCI\n";
  for (const ScoreYearRow& r : t.rows)
    std::cout << strprintf("  %-20s %7.3f %7.3f %7.3f %7.3f %7.3f\n", r.name.c_str(), r.m, r.o,
                           r.sci, r.tsci, r.osci);
  for (size_t i = 0; i < kMetrics.size(); ++i)
    std::cout << strprintf("  %-5s picks %-20s cluster footprint %.4f  (%+.2f%% over oSCI)\n",
                           to_string(kMetrics[i]), t.rows[t.chosen[i]].name.c_str(), t.footprint[i],
                           100 * t.added_over_osci[i]);
}

void score_year_json(const Fleet& f, const ScoreYearTable& t, const CarbonSettings& s) {
  common::JsonWriter w(std::cout);
  w.begin_object().field("fleet", f.name).field("grid_g_per_kwh", s.grid_g_per_kwh);
  w.field("amortization", to_string(s.amortization)).key("servers").begin_array();
  for (const ScoreYearRow& r : t.rows)
    w.begin_object()
        .field("name", r.name)
        .field("m", r.m)
        .field("o", r.o)
        .field("sci", r.sci)
        .field("tsci", r.tsci)
        .field("osci", r.osci)
        .end_object();
  w.end_array().key("metrics").begin_array();
  for (size_t i = 0; i < kMetrics.size(); ++i)
    w.begin_object()
        .field("metric", to_string(kMetrics[i]))
        .field("chosen", t.rows[t.chosen[i]].name)
        .field("footprint", t.footprint[i])
        .field("added_over_osci", t.added_over_osci[i])
        .end_object();
  w.end_array().end_object();
  std::cout << '\n';
}

void utilization_csv(std::ostream& os, const std::vector<UtilizationPoint>& pts) {
  os << "utilization,jobs,footprint_osci_kg,footprint_sci_kg,footprint_tsci_kg,added_sci,"
        "added_tsci,unplaced_osci,unplaced_sci,unplaced_tsci\n";
  for (const UtilizationPoint& p : pts)
    os << strprintf("%.6g,%llu,%.9g,%.9g,%.9g,%.6g,%.6g,%llu,%llu,%llu\n", p.utilization,
                    static_cast<unsigned long long>(p.jobs), kg(p.footprint_g[0]),
                    kg(p.footprint_g[1]), kg(p.footprint_g[2]), p.added_over_osci[1],
                    p.added_over_osci[2], static_cast<unsigned long long>(p.unplaced[0]),
                    static_cast<unsigned long long>(p.unplaced[1]),
                    static_cast<unsigned long long>(p.unplaced[2]));
}

}  // namespace

int cmd_place(int argc, char** argv) {
  cxxopts::Options o("lumos place",
                     "Place jobs on a fleet by oSCI, SCI and tSCI, and what each costs the fleet");
  o.add_options()("fleet", "fleet file (TOML; README \"Carbon and placement\")",
                  cxxopts::value<std::string>())("jobs", "jobs file (TOML [[job]] tables)",
                                                 cxxopts::value<std::string>())(
      "sweep", "one job from a `lumos sweep` variants CSV over GPU types",
      cxxopts::value<std::string>())("job-name", "name of the --sweep job",
                                     cxxopts::value<std::string>()->default_value("training"))(
      "copies", "--sweep: this many such jobs, running at once (they share the fleet)",
      cxxopts::value<int>()->default_value("1"))(
      "score-year", "per-score-year values of each server type (the paper's Tables 2 and 4)")(
      "utilization", "sweep the load FROM:TO:STEP (e.g. 0:1:0.05)", cxxopts::value<std::string>())(
      "job-score", "--utilization: every job needs this benchmark score", cxxopts::value<double>())(
      "case-study", "--utilization: jobs of the paper's virtual-core classes (seeded)")(
      "seed", "--case-study seed", cxxopts::value<uint64_t>()->default_value("1"))(
      "o,output", "--utilization: write the curve to this CSV", cxxopts::value<std::string>())(
      "plot", "--utilization: draw the curve to this SVG file", cxxopts::value<std::string>())(
      "amortization", "linear | zero-after-lifetime | years-in-service",
      cxxopts::value<std::string>()->default_value("years-in-service"))(
      "grid-intensity", "gCO2/kWh (default: the fleet's grid_g_per_kwh)", cxxopts::value<double>())(
      "procurement",
      "the server types are candidates to buy: footprints count the embodied carbon of the "
      "servers the jobs need, not of every server listed")("json", "print JSON")("h,help",
                                                                                 "show this help");
  o.parse_positional({"fleet"});
  o.positional_help("FLEET.toml");
  const auto a = o.parse(argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << '\n';
    return 0;
  }
  if (!a.unmatched().empty())
    throw InputError("lumos place: unexpected argument '" + a.unmatched()[0] + "'");
  LUMOS_EXPECT(a.count("fleet"), "lumos place: a fleet file is required (lumos place FLEET.toml)");
  const int modes = static_cast<int>(a.count("jobs") + a.count("sweep") + a.count("score-year") +
                                     a.count("utilization"));
  LUMOS_EXPECT(modes == 1,
               "lumos place: give one of --jobs, --sweep, --score-year and --utilization");
  if (a.count("output")) {
    LUMOS_EXPECT(a.count("utilization"), "lumos place: -o goes with --utilization");
    if (!is_stdout(a["output"].as<std::string>())) check_output_path(a["output"].as<std::string>());
  }
  if (a.count("plot")) {
    LUMOS_EXPECT(a.count("utilization"), "lumos place: --plot goes with --utilization");
    check_output_path(a["plot"].as<std::string>());
  }
  const Fleet fleet = load_fleet(a["fleet"].as<std::string>());
  CarbonSettings s;
  s.amortization = parse_amortization(a["amortization"].as<std::string>(), "--amortization");
  s.procurement = a.count("procurement") > 0;
  s.grid_g_per_kwh =
      a.count("grid-intensity") ? a["grid-intensity"].as<double>() : fleet.grid_g_per_kwh;
  LUMOS_EXPECT(s.grid_g_per_kwh >= 0 && std::isfinite(s.grid_g_per_kwh),
               "lumos place: no grid intensity (give --grid-intensity G or the fleet's "
               "grid_g_per_kwh), or a negative one");
  const bool json = a.count("json") > 0;

  if (a.count("score-year")) {
    const ScoreYearTable t = score_year_table(fleet, s);
    json ? score_year_json(fleet, t, s) : score_year_text(fleet, t, s);
    return 0;
  }
  if (a.count("utilization")) {
    const std::vector<double> levels = parse_levels(a["utilization"].as<std::string>());
    LUMOS_EXPECT(a.count("job-score") + a.count("case-study") == 1,
                 "lumos place --utilization: give --job-score S or --case-study");
    DemandGenerator demand;
    if (a.count("case-study")) {
      demand = case_study_jobs(a["seed"].as<uint64_t>());
    } else {
      const double score = a["job-score"].as<double>();
      LUMOS_EXPECT(score > 0 && std::isfinite(score), "--job-score must be positive");
      demand = [score](uint64_t) { return score; };
    }
    const std::vector<UtilizationPoint> pts = utilization_sweep(fleet, demand, levels, s);
    if (a.count("plot")) {
      std::vector<report::ChartSeries> lines = {{"SCI over oSCI", "#d62728", {}},
                                                {"tSCI over oSCI", "#1f77b4", {}}};
      for (const UtilizationPoint& p : pts) {
        lines[0].points.emplace_back(p.utilization, p.added_over_osci[1]);
        lines[1].points.emplace_back(p.utilization, p.added_over_osci[2]);
      }
      write_output(a["plot"].as<std::string>(), [&](std::ostream& os) {
        report::line_chart_svg(os,
                               strprintf("Carbon added over oSCI placement: %s, amortized %s",
                                         fleet.name.c_str(), to_string(s.amortization)),
                               "fleet utilization", "added cluster carbon footprint", lines, true,
                               true);
      });
    }
    if (a.count("output"))
      write_output(a["output"].as<std::string>(),
                   [&](std::ostream& os) { utilization_csv(os, pts); });
    if (a.count("output") && is_stdout(a["output"].as<std::string>())) return 0;
    size_t peak = 0;
    for (size_t i = 0; i < pts.size(); ++i)
      if (pts[i].added_over_osci[1] > pts[peak].added_over_osci[1]) peak = i;
    if (json) {
      common::JsonWriter w(std::cout);
      w.begin_object().field("fleet", fleet.name).field("amortization", to_string(s.amortization));
      w.key("points").begin_array();
      for (const UtilizationPoint& p : pts)
        w.begin_object()
            .field("utilization", p.utilization)
            .field("jobs", p.jobs)
            .field("footprint_osci_g", p.footprint_g[0])
            .field("footprint_sci_g", p.footprint_g[1])
            .field("footprint_tsci_g", p.footprint_g[2])
            .field("added_sci", p.added_over_osci[1])
            .field("added_tsci", p.added_over_osci[2])
            .field("unplaced_osci", p.unplaced[0])
            .field("unplaced_sci", p.unplaced[1])
            .field("unplaced_tsci", p.unplaced[2])
            .end_object();
      w.end_array().end_object();
      std::cout << '\n';
      return 0;
    }
    std::cout << strprintf(
        "lumos place --utilization: fleet %s, %zu levels, grid %.4g gCO2/kWh, amortization %s\n",
        fleet.name.c_str(), pts.size(), s.grid_g_per_kwh, to_string(s.amortization));
    std::cout << "  utilization   jobs   SCI over oSCI   tSCI over oSCI   unplaced (fit on no "
                 "single server type; oSCI/SCI/tSCI)\n";
    for (const UtilizationPoint& p : pts)
      std::cout << strprintf("  %10.1f%% %6llu %+14.2f%% %+15.2f%%   %llu/%llu/%llu\n",
                             100 * p.utilization, static_cast<unsigned long long>(p.jobs),
                             100 * p.added_over_osci[1], 100 * p.added_over_osci[2],
                             static_cast<unsigned long long>(p.unplaced[0]),
                             static_cast<unsigned long long>(p.unplaced[1]),
                             static_cast<unsigned long long>(p.unplaced[2]));
    std::cout << strprintf("  SCI adds most at %.1f%% utilization: %+.2f%% carbon\n",
                           100 * pts[peak].utilization, 100 * pts[peak].added_over_osci[1]);
    if (a.count("output")) std::cout << "  wrote " << a["output"].as<std::string>() << '\n';
    if (a.count("plot")) std::cout << "  wrote " << a["plot"].as<std::string>() << '\n';
    return 0;
  }
  std::vector<Job> jobs;
  if (a.count("jobs")) {
    LUMOS_EXPECT(!a.count("copies"), "lumos place: --copies goes with --sweep");
    jobs = load_jobs(a["jobs"].as<std::string>(), fleet);
  } else {
    const int copies = a["copies"].as<int>();
    LUMOS_EXPECT(copies >= 1 && copies <= 100000, "lumos place: --copies must be 1 to 100000");
    const Job j =
        job_from_sweep_csv(a["sweep"].as<std::string>(), fleet, a["job-name"].as<std::string>());
    for (int i = 0; i < copies; ++i) {
      jobs.push_back(j);
      if (copies > 1) jobs.back().name += " #" + std::to_string(i + 1);
    }
  }
  // Every metric's footprint over one horizon: the longest run any of them chose (the choices do
  // not depend on it).
  double horizon_h = 0;
  for (Metric m : kMetrics) {
    const Placement p = place_jobs(fleet, jobs, m, s);
    for (size_t j = 0; j < jobs.size(); ++j)
      horizon_h = std::max(horizon_h, jobs[j].options[p.option_of[j]].hours);
  }
  std::vector<Placement> ps;
  for (Metric m : kMetrics) ps.push_back(place_jobs(fleet, jobs, m, s, horizon_h));
  json ? placements_json(fleet, jobs, ps, s) : placements_text(fleet, jobs, ps, s);
  return 0;
}

}  // namespace lumos::cli
