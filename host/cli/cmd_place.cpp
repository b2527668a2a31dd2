// lumos place: jobs placed on a fleet by each carbon metric (oSCI, SCI, tSCI), the fleet's total
// carbon under each, the paper's per-score-year tables, and utilization sweeps (host/carbon/).
#include <cxxopts.hpp>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "carbon/fleet.hpp"
#include "carbon/placement.hpp"
#include "carbon/sensitivity.hpp"
#include "cli/commands.hpp"
#include "cli/count_options.hpp"
#include "cli/decimal_options.hpp"
#include "cli/help_text.hpp"
#include "cli/path_options.hpp"
#include "cli/place_options.hpp"
#include "cli/quiet_option.hpp"
#include "cli/unexpected_args.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/physical_ranges.hpp"
#include "common/progress.hpp"
#include "report/place_report.hpp"
#include "report/sensitivity_report.hpp"

namespace lumos::cli {

int cmd_place(int argc, char** argv) {
  using namespace lumos::carbon;
  cxxopts::Options o("lumos place",
                     "Place jobs on a fleet by oSCI, SCI and tSCI, and what each costs the fleet. "
                     "A fleet has at most 10,000 server types and 10,000,000 servers; a "
                     "placement at most 1,000,000 jobs and 1e9 job-options of work.");
  place_options(o);
  const auto a = parse_options(o, argc, argv);
  if (a.count("help")) {
    std::cout << help_with_examples(
                     o, {"lumos place examples/fleets/two-servers.toml --score-year",
                         "lumos place examples/fleets/mit-740.toml --utilization 0:1:0.01 "
                         "--case-study --plot cs.svg",
                         "lumos place examples/fleets/two-servers.toml --sweep-grid-intensity "
                         "0:600:10 -o grid.csv"})
              << '\n';
    return 0;
  }
  refuse_unexpected_args(a, "lumos place");
  LUMOS_EXPECT(a.count("fleet"), "lumos place: a fleet file is required (lumos place FLEET.toml)");
  check_paths("lumos place", a,
              {{"fleet", "the fleet file"},
               {"jobs", "the jobs file (--jobs)"},
               {"sweep", "the variants CSV (--sweep)"}},
              {{"output", "-o"}, {"plot", "--plot"}});
  const int modes = static_cast<int>(a.count("jobs") + a.count("sweep") + a.count("score-year") +
                                     a.count("utilization"));
  const size_t sensitivity = a.count("sweep-grid-intensity") + a.count("sweep-lifetime");
  LUMOS_EXPECT(modes + sensitivity == 1,
               "lumos place: give one of --jobs, --sweep, --score-year, --utilization, "
               "--sweep-grid-intensity and --sweep-lifetime");
  if (a.count("output")) {
    LUMOS_EXPECT(a.count("utilization") + sensitivity,
                 "lumos place: -o goes with --utilization or --sweep-*");
    if (!is_stdout(a["output"].as<std::string>())) check_output_path(a["output"].as<std::string>());
  }
  if (a.count("plot")) {
    LUMOS_EXPECT(a.count("utilization") + sensitivity,
                 "lumos place: --plot goes with --utilization or --sweep-*");
    check_output_path(a["plot"].as<std::string>());
  }
  const Fleet fleet = load_fleet(a["fleet"].as<std::string>());
  Progress progress(sensitivity ? "values" : "utilization levels", quiet(a));
  CarbonSettings s;
  s.amortization = parse_amortization(a["amortization"].as<std::string>(), "--amortization");
  s.procurement = a.count("procurement") > 0;
  s.grid_g_per_kwh =
      a.count("grid-intensity")
          ? expect_in_range(kGridIntensityRange, decimal_of(a, "grid-intensity", "lumos place"),
                            "--grid-intensity")
          : fleet.grid_g_per_kwh;
  LUMOS_EXPECT(s.grid_g_per_kwh >= 0,
               "lumos place: no grid intensity (give --grid-intensity G or the fleet's "
               "grid_g_per_kwh)");
  const bool json = a.count("json") > 0;

  if (a.count("score-year")) {
    const ScoreYearTable t = score_year_table(fleet, s);
    json ? report::score_year_json(std::cout, fleet, t, s)
         : report::score_year_text(std::cout, fleet, t, s);
    return 0;
  }
  if (sensitivity) {
    const bool grid = a.count("sweep-grid-intensity") > 0;
    const std::string opt = grid ? "sweep-grid-intensity" : "sweep-lifetime";
    const SensitivitySweep w = sensitivity_sweep(
        fleet, s, grid ? SweepParameter::kGridIntensity : SweepParameter::kLifetime,
        parse_sweep_values(a[opt].as<std::string>(), "--" + opt, 0, grid ? 10000 : 100),
        progress.fn());
    if (a.count("plot"))
      write_output(a["plot"].as<std::string>(),
                   [&](std::ostream& os) { report::sensitivity_svg(os, fleet, w, s); });
    if (a.count("output"))
      write_output(a["output"].as<std::string>(),
                   [&](std::ostream& os) { report::sensitivity_csv(os, fleet, w); });
    if (a.count("output") && is_stdout(a["output"].as<std::string>())) return 0;
    if (json) return report::sensitivity_json(std::cout, fleet, w, s), 0;
    report::sensitivity_text(std::cout, fleet, w, s);
    for (const char* out : {"output", "plot"})
      if (a.count(out)) std::cout << "  wrote " << a[out].as<std::string>() << '\n';
    return 0;
  }
  if (a.count("utilization")) {
    const std::vector<double> levels =
        parse_sweep_values(a["utilization"].as<std::string>(), "--utilization", 0, 1, "0:1:0.05");
    LUMOS_EXPECT(a.count("job-score") + a.count("case-study") == 1,
                 "lumos place --utilization: give --job-score S or --case-study");
    DemandGenerator demand;
    if (a.count("case-study")) {
      demand = case_study_jobs(static_cast<uint64_t>(count_of(a, kPlaceSeed, "lumos place: ")));
      s.footprint = parse_footprint(
          a.count("case-study-model") ? a["case-study-model"].as<std::string>() : "paper",
          "--case-study-model");
      s.server_base_w = case_study_server_base_w(fleet);
    } else {
      const double score = decimal_of(a, "job-score", "lumos place");
      LUMOS_EXPECT(score > 0 && std::isfinite(score), "--job-score must be positive");
      demand = [score](uint64_t) { return score; };
    }
    const std::vector<UtilizationPoint> pts =
        utilization_sweep(fleet, demand, levels, s, kHoursPerYear, progress.fn());
    if (a.count("plot"))
      write_output(a["plot"].as<std::string>(),
                   [&](std::ostream& os) { report::utilization_svg(os, fleet, pts, s); });
    if (a.count("output"))
      write_output(a["output"].as<std::string>(),
                   [&](std::ostream& os) { report::utilization_csv(os, pts); });
    if (a.count("output") && is_stdout(a["output"].as<std::string>())) return 0;
    if (json) return report::utilization_json(std::cout, fleet, pts, s), 0;
    report::utilization_text(std::cout, fleet, pts, s);
    if (a.count("output")) std::cout << "  wrote " << a["output"].as<std::string>() << '\n';
    if (a.count("plot")) std::cout << "  wrote " << a["plot"].as<std::string>() << '\n';
    return 0;
  }
  std::vector<Job> jobs;
  if (a.count("jobs")) {
    LUMOS_EXPECT(!a.count("copies"), "lumos place: --copies goes with --sweep");
    jobs = load_jobs(a["jobs"].as<std::string>(), fleet);
  } else {
    const int copies = static_cast<int>(count_of(a, kPlaceCopies, "lumos place: "));
    const Job j =
        job_from_sweep_csv(a["sweep"].as<std::string>(), fleet, a["job-name"].as<std::string>());
    for (int i = 0; i < copies; ++i) {
      jobs.push_back(j);
      if (copies > 1) jobs.back().name += " #" + std::to_string(i + 1);
    }
  }
  const std::vector<Placement> ps = place_by_every_metric(fleet, jobs, s);
  json ? report::placements_json(std::cout, fleet, jobs, ps, s)
       : report::placements_text(std::cout, fleet, jobs, ps, s);
  return 0;
}

}  // namespace lumos::cli
