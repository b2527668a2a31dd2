// lumos bench estimate: the model-driven estimate against every published run lumos carries (the
// calibration check), the time an estimate of the largest preset at 1024 GPUs takes, and the
// residuals file that estimates' ranges come from (--write-residuals).
#include <cxxopts.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/count_options.hpp"
#include "cli/help_text.hpp"
#include "cli/path_options.hpp"
#include "cli/quiet_option.hpp"
#include "cli/unexpected_args.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/progress.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/calibration_check.hpp"
#include "report/bench_report.hpp"

namespace lumos::cli {

int bench_estimate(int argc, char** argv) {
  cxxopts::Options o("lumos bench estimate",
                     "Calibration check against published runs, and estimate latency");
  constexpr CountOption kRuns{"runs", 1, 1000};
  o.add_options()(kRuns.name,
                  count_help("timed estimates of the largest preset at 1024 GPUs", kRuns),
                  count_value("5"))("json", "print JSON")(
      "write-residuals",
      "also write each run's error to this file (kernels_db/calibration.json: the basis of "
      "every estimate's range)",
      cxxopts::value<std::string>())("db",
                                     "read kernels_db from this folder (check an edited table)",
                                     cxxopts::value<std::string>())("h,help", "show this help");
  add_quiet_option(o);
  const auto a = parse_options(o, argc, argv);
  if (a.count("help")) {
    std::cout << help_with_examples(o, {"lumos bench estimate  # error against published runs",
                                        "lumos bench estimate --runs 20 --json"})
              << '\n';
    return 0;
  }
  refuse_unexpected_args(a, "lumos bench estimate");
  check_paths("lumos bench estimate", a, {kDbInput}, {{"write-residuals", "--write-residuals"}});
  const int runs = static_cast<int>(count_of(a, kRuns, "lumos bench estimate: "));
  if (a.count("write-residuals")) check_output_path(a["write-residuals"].as<std::string>());
  cost::KernelsDb storage;
  const cost::KernelsDb& db =
      a.count("db") ? (storage = cost::load_db(a["db"].as<std::string>())) : cost::embedded_db();
  Progress progress("timed estimates", quiet(a));
  const estimate::CalibrationCheck c = estimate::check_calibration(db, runs, progress.fn());
  if (a.count("write-residuals"))
    write_output(a["write-residuals"].as<std::string>(),
                 [&](std::ostream& os) { report::residuals_json(os, c); });
  if (a.count("json"))
    report::calibration_json(std::cout, c);
  else
    report::calibration_text(std::cout, c);
  return 0;
}

}  // namespace lumos::cli
