// lumos bench estimate: the model-driven estimate against every published run lumos carries (the
// calibration check), the time an estimate of the largest preset at 1024 GPUs takes, the
// leave-one-source-out cross-validation of the fitted constants (--cross-validate), the check
// against the published columns no constant is fitted to (--unfitted), and the residuals file
// that estimates' ranges come from (--write-residuals).
#include <cxxopts.hpp>

#include <ctime>
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
#include "estimate/cross_validation.hpp"
#include "report/bench_report.hpp"
#include "report/cross_validation_report.hpp"

namespace lumos::cli {

namespace {

// The date (UTC) and commit a residuals table is made at: what its coverage statement is about.
std::string generated_note(const std::string& commit) {
  char date[16];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(date, sizeof date, "%Y-%m-%d", &utc);
  return std::string(date) + (commit.empty() ? "" : ", commit " + commit);
}

}  // namespace

int bench_estimate(int argc, char** argv) {
  cxxopts::Options o("lumos bench estimate",
                     "Calibration check against published runs, cross-validation of the fitted "
                     "constants, and estimate latency");
  constexpr CountOption kRuns{"runs", 1, 1000};
  o.add_options()(kRuns.name,
                  count_help("timed estimates of the largest preset at 1024 GPUs", kRuns),
                  count_value("5"))("json", "print JSON")(
      "cross-validate",
      "leave one source out: refit every fitted constant on the other sources and report each "
      "source's left-out error beside its in-sample error (in place of the calibration table)")(
      "csv", "with --cross-validate: also write one row per run to this file ('-': stdout)",
      cxxopts::value<std::string>())(
      "unfitted",
      "compare with the columns of dgxc-benchmarking's tables that no constant is fitted to (the "
      "same recipes at other GPU counts, 405B's proxy layouts) and their FP8/BF16 ratios, in place "
      "of the calibration table")(
      "write-residuals",
      "also write each run's in-sample and left-out error to this file "
      "(kernels_db/calibration.json: the basis of every estimate's range); runs the "
      "cross-validation",
      cxxopts::value<std::string>())("commit",
                                     "the commit to record in the residuals file beside the date",
                                     cxxopts::value<std::string>()->default_value(""))(
      "db", "read kernels_db from this folder (check an edited table)",
      cxxopts::value<std::string>())("h,help", "show this help");
  add_quiet_option(o);
  const auto a = parse_options(o, argc, argv);
  if (a.count("help")) {
    std::cout << help_with_examples(o, {"lumos bench estimate  # error against published runs",
                                        "lumos bench estimate --runs 20 --json",
                                        "lumos bench estimate --unfitted  # columns not fitted"})
              << '\n';
    return 0;
  }
  refuse_unexpected_args(a, "lumos bench estimate");
  check_paths("lumos bench estimate", a, {kDbInput},
              {{"write-residuals", "--write-residuals"}, {"csv", "--csv"}});
  const int runs = static_cast<int>(count_of(a, kRuns, "lumos bench estimate: "));
  const bool cross = a.count("cross-validate") > 0;
  LUMOS_EXPECT(!a.count("csv") || cross, "lumos bench estimate: --csv needs --cross-validate");
  LUMOS_EXPECT(!cross || !a.count("json"),
               "lumos bench estimate: --cross-validate prints a table (use --csv for rows)");
  LUMOS_EXPECT(!a.count("unfitted") || (!cross && !a.count("write-residuals") && !a.count("runs")),
               "lumos bench estimate: --unfitted is a check of its own (without --cross-validate, "
               "--write-residuals and --runs)");
  if (a.count("write-residuals")) check_output_path(a["write-residuals"].as<std::string>());
  if (a.count("csv") && !is_stdout(a["csv"].as<std::string>()))
    check_output_path(a["csv"].as<std::string>());
  cost::KernelsDb storage;
  const cost::KernelsDb& db =
      a.count("db") ? (storage = cost::load_db(a["db"].as<std::string>())) : cost::embedded_db();
  if (a.count("unfitted")) {
    const estimate::UnfittedCheck u = estimate::check_unfitted_columns(db);
    if (a.count("json"))
      report::unfitted_json(std::cout, u);
    else
      report::unfitted_text(std::cout, u);
    return 0;
  }
  if (!cross && !a.count("write-residuals")) {
    Progress progress("timed estimates", quiet(a));
    const estimate::CalibrationCheck c = estimate::check_calibration(db, runs, progress.fn());
    if (a.count("json"))
      report::calibration_json(std::cout, c);
    else
      report::calibration_text(std::cout, c);
    return 0;
  }
  const estimate::CrossValidation cv = estimate::cross_validate(db, estimate::published_runs());
  std::vector<double> in_sample;
  for (const estimate::CalibrationRow& r : estimate::calibration_rows(db))
    in_sample.push_back(r.error_pct);
  const auto residuals = estimate::residuals_of(cv, in_sample);
  cost::ResidualsCoverage coverage = estimate::range_coverage(db, residuals, cv);
  coverage.generated = generated_note(a["commit"].as<std::string>());
  if (a.count("write-residuals"))
    write_output(a["write-residuals"].as<std::string>(),
                 [&](std::ostream& os) { report::residuals_json(os, residuals, coverage); });
  if (a.count("csv"))
    write_output(a["csv"].as<std::string>(),
                 [&](std::ostream& os) { report::cross_validation_csv(os, cv); });
  if (cross && !(a.count("csv") && is_stdout(a["csv"].as<std::string>())))
    report::cross_validation_text(std::cout, cv, coverage);
  if (!cross) {
    const estimate::CalibrationCheck c = estimate::check_calibration(db, runs);
    if (a.count("json"))
      report::calibration_json(std::cout, c);
    else
      report::calibration_text(std::cout, c);
  }
  return 0;
}

}  // namespace lumos::cli
