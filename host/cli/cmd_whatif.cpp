// lumos whatif [TRACE]: a traced step under a grid of variants at once (other GPUs, per-class
// speed-ups): step time and GPU energy per variant, and the Pareto front.
#include <cxxopts.hpp>

#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/input_options.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/trace_whatif.hpp"
#include "graph/load_input.hpp"
#include "report/build_warnings.hpp"
#include "report/whatif_report.hpp"

namespace lumos::cli {
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int cmd_whatif(int argc, char** argv) {
  cxxopts::Options o(
      "lumos whatif",
      "Replay a trace under many variants at once: other GPUs (--gpus) times per-class speed-ups "
      "(--speed), with step time, GPU energy and the Pareto front over both.");
  o.positional_help("[TRACE | GRAPH.lgraph]");
  o.add_options()("input", "trace or graph (default: the embedded demo)",
                  cxxopts::value<std::string>())(
      "traced-gpu", "GPU the trace ran on (default: the trace's deviceProperties, else h100)",
      cxxopts::value<std::string>())("gpus",
                                     "comma-separated target GPUs (default: the traced one)",
                                     cxxopts::value<std::string>())(
      "speed", "speed-up axes, ';'-separated, e.g. 'compute=1,2;comm=0.5,1,2'",
      cxxopts::value<std::string>())("backend", "auto, reference, cpu or cuda",
                                     cxxopts::value<std::string>()->default_value("auto"))(
      "csv", "write the table as CSV (- prints it in place of the report)",
      cxxopts::value<std::string>())("json", "print JSON")("h,help", "show this help");
  add_input_options(o);
  o.parse_positional({"input"});
  const auto a = o.parse(argc, argv);
  if (a.count("help")) return std::cout << o.help() << '\n', 0;
  apply_input_options(a);
  if (a.count("csv")) {  // before the variants: a bad path should not cost their time
    LUMOS_EXPECT(!is_stdout(a["csv"].as<std::string>()) || !a.count("json"),
                 "lumos whatif: --csv - and --json both write to standard output");
    if (!is_stdout(a["csv"].as<std::string>())) check_output_path(a["csv"].as<std::string>());
  }
  estimate::WhatifRequest req;
  if (a.count("traced-gpu")) req.traced_gpu = a["traced-gpu"].as<std::string>();
  if (a.count("gpus")) {
    req.gpus = split_list(a["gpus"].as<std::string>());
    if (req.gpus.empty()) throw InputError("lumos whatif: --gpus names no GPU");
  }
  if (a.count("speed")) req.speed = a["speed"].as<std::string>();
  req.backend = engine::parse_backend(a["backend"].as<std::string>());
  const graph::LoadedInput in =
      graph::load_input(a.count("input") ? a["input"].as<std::string>() : "");
  report::build_warnings(std::cerr, in.stats);
  const estimate::WhatifAnswer ans = estimate::run_whatif(in, req, cost::embedded_db());
  if (a.count("csv")) {
    write_output(a["csv"].as<std::string>(),
                 [&](std::ostream& os) { report::whatif_csv(os, ans); });
    if (is_stdout(a["csv"].as<std::string>())) return 0;  // the table is the output
  }
  if (a.count("json"))
    report::whatif_json(std::cout, in.label, ans);
  else
    report::whatif_text(std::cout, in.label, ans);
  return 0;
}

}  // namespace lumos::cli
