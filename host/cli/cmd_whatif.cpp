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
  o.positional_help("[TRACE | FOLDER | GRAPH.lgraph]");
  o.add_options()("input", "trace, folder of one job's rank traces, or graph (default: the demo)",
                  cxxopts::value<std::string>())(
      "traced-gpu", "GPU the trace ran on (default: the trace's deviceProperties, else h100)",
      cxxopts::value<std::string>())("gpus",
                                     "comma-separated target GPUs (default: the traced one)",
                                     cxxopts::value<std::string>())(
      "speed", "speed-up axes, ';'-separated, e.g. 'compute=1,2;comm=0.5,1,2'",
      cxxopts::value<std::string>())("backend", "auto, reference, cpu or cuda",
                                     cxxopts::value<std::string>()->default_value("auto"))(
      "csv", "write the table as CSV (- prints it in place of the report)",
      cxxopts::value<std::string>())("json", "print JSON")(
      "describe", "print the job found in the traces (groups, degrees, layers) and stop")(
      "dp", "edit: another data-parallel degree (gradient collectives repriced)",
      cxxopts::value<int>())("topology",
                             "edit: price collectives on this kernels_db network topology",
                             cxxopts::value<std::string>())(
      "nic-gbps", "edit: NIC line rate in GB/s of the network priced on", cxxopts::value<double>())(
      "traced-topology", "network the trace ran on (default: the traced GPU's in kernels_db)",
      cxxopts::value<std::string>())("h,help", "show this help");
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
  if (a.count("dp")) {
    req.dp = a["dp"].as<int>();
    LUMOS_EXPECT(req.dp >= 1, "lumos whatif: --dp: expected a degree of at least 1");
  }
  if (a.count("topology")) req.topology = a["topology"].as<std::string>();
  if (a.count("traced-topology")) req.traced_topology = a["traced-topology"].as<std::string>();
  if (a.count("nic-gbps")) {
    req.nic_gbps = a["nic-gbps"].as<double>();
    LUMOS_EXPECT(req.nic_gbps > 0, "lumos whatif: --nic-gbps: expected a positive rate in GB/s");
  }
  const graph::LoadedInput in =
      graph::load_job(a.count("input") ? a["input"].as<std::string>() : "");
  report::build_warnings(std::cerr, in.stats);
  for (const auto& w : in.warnings) std::cerr << "lumos whatif: " << w << '\n';
  if (a.count("describe")) {
    const whatif::JobStructure js = estimate::describe_job(in, cost::embedded_db());
    if (a.count("json"))
      report::job_structure_json(std::cout, in.label, js);
    else
      report::job_structure_text(std::cout, in.label, js);
    return 0;
  }
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
