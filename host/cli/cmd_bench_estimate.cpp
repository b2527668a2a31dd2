// lumos bench estimate: the model-driven estimate against published DGX-H100 throughputs (the
// calibration check) and the time an estimate of the largest preset at 1024 GPUs takes.
#include <cxxopts.hpp>

#include <iostream>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/calibration_check.hpp"
#include "report/bench_report.hpp"

namespace lumos::cli {

int bench_estimate(int argc, char** argv) {
  cxxopts::Options o("lumos bench estimate",
                     "Calibration check against published DGX-H100 runs, and estimate latency");
  o.add_options()("runs", "timed estimates of the largest preset at 1024 GPUs",
                  cxxopts::value<int>()->default_value("5"))("json", "print JSON")(
      "h,help", "show this help");
  const auto a = o.parse(argc, argv);
  if (a.count("help")) {
    std::cout << o.help() << '\n';
    return 0;
  }
  const int runs = a["runs"].as<int>();
  LUMOS_EXPECT(runs >= 1 && runs <= 1000, "lumos bench estimate: --runs must be 1..1000");
  const estimate::CalibrationCheck c = estimate::check_calibration(cost::embedded_db(), runs);
  if (a.count("json"))
    report::calibration_json(std::cout, c);
  else
    report::calibration_text(std::cout, c);
  return 0;
}

}  // namespace lumos::cli
