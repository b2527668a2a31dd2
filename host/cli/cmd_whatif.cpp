// lumos whatif [TRACE]: a traced step under a grid of variants at once (other GPUs, per-class
// speed-ups): step time and GPU energy per variant, and the Pareto front.
#include <cxxopts.hpp>

#include <algorithm>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/count_options.hpp"
#include "cli/help_text.hpp"
#include "cli/input_options.hpp"
#include "cli/path_options.hpp"
#include "cli/quiet_option.hpp"
#include "cli/traced_options.hpp"
#include "cli/unexpected_args.hpp"
#include "cli/whatif_structural.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/progress.hpp"
#include "cost/kernels_db.hpp"
#include "cost/size_units.hpp"
#include "estimate/generated_trace.hpp"
#include "estimate/trace_structural.hpp"
#include "estimate/trace_whatif.hpp"
#include "graph/load_input.hpp"
#include "model/model_spec.hpp"
#include "report/build_warnings.hpp"
#include "report/structural_report.hpp"
#include "report/timeline_writer.hpp"
#include "report/whatif_report.hpp"
#include "whatif/grid.hpp"
#include "whatif/peer_waits.hpp"

namespace lumos::cli {

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
      kDp.name,
      count_help("edit: another data-parallel degree (gradient collectives repriced)", kDp),
      count_value())("topology", "edit: price collectives on this kernels_db network topology",
                     cxxopts::value<std::string>())(
      "nic-bandwidth",
      "edit: NIC line rate of the network priced on, with its unit (400Gbps, 50GB/s)",
      cxxopts::value<std::string>())(
      "traced-topology", "network the trace ran on (default: the traced GPU's in kernels_db)",
      cxxopts::value<std::string>())("h,help", "show this help");
  // Structural edits: the iteration rebuilt for another configuration (trace_structural.hpp).
  o.add_options(
      "structural edits (--layers needs no model; the others need --model or --model-file: what "
      "the trace ran)")("model", "the traced model: a preset (gpt3-15b, llama3-8b, ...)",
                        cxxopts::value<std::string>())(
      "model-file", "the traced model: a TOML model file", cxxopts::value<std::string>())(
      "stack", "software stack the trace ran (kernels_db/stacks.json)",
      cxxopts::value<std::string>())(
      kLayers.name,
      count_help(
          "edit: transformer layers (traced layers duplicated or removed on the traced graph)",
          kLayers),
      count_value())(kHidden.name, count_help("edit: hidden size", kHidden), count_value())(
      kFfn.name, count_help("edit: MLP inner size", kFfn), count_value())(
      kHeads.name, count_help("edit: attention heads", kHeads), count_value())(
      kSeq.name, count_help("edit: sequence length", kSeq), count_value())(
      kTp.name, count_help("edit: tensor parallel degree", kTp), count_value())(
      kPp.name, count_help("edit: pipeline stages (traced stages regrouped)", kPp), count_value())(
      kInterleave.name, count_help("edit: virtual stages per GPU", kInterleave), count_value())(
      kMbs.name, count_help("edit: micro-batch size", kMbs), count_value())(
      kGbs.name, count_help("edit: global batch size", kGbs), count_value())(
      "gpu", "edit: the GPU the edited job runs on", cxxopts::value<std::string>())(
      "timeline", "write the edited iteration as a Chrome trace", cxxopts::value<std::string>())(
      "emit-traces", "write the edited job as one Kineto trace per stage into this new folder",
      cxxopts::value<std::string>());
  traced_options(o, "the traced job (over what the trace shows)");
  add_input_options(o);
  add_quiet_option(o);
  o.parse_positional({"input"});
  const auto a = parse_options(o, argc, argv);
  if (a.count("help"))
    return std::cout << help_with_examples(
                            o, {"lumos whatif trace.json.gz --gpus h100,h200,b200  # other GPUs",
                                "lumos whatif trace.json.gz --speed 'comm=0.5,1,2' --csv v.csv",
                                "lumos whatif ranks/ --dp 64  # the traced job at a larger scale"})
                     << '\n',
           0;
  refuse_unexpected_args(a, "lumos whatif");
  apply_input_options(a);
  check_paths("lumos whatif", a, {{"input", "the input"}, kModelFileInput},
              {{"csv", "--csv"}, {"timeline", "--timeline"}, {"emit-traces", "--emit-traces"}});
  if (a.count("csv")) {  // before the variants: a bad path should not cost their time
    LUMOS_EXPECT(!is_stdout(a["csv"].as<std::string>()) || !a.count("json"),
                 "lumos whatif: --csv - and --json both write to standard output");
    if (!is_stdout(a["csv"].as<std::string>())) check_output_path(a["csv"].as<std::string>());
  }
  estimate::WhatifRequest req;
  if (a.count("traced-gpu")) req.traced_gpu = a["traced-gpu"].as<std::string>();
  if (a.count("gpus"))
    req.gpus = whatif::parse_gpu_axis(a["gpus"].as<std::string>(), "lumos whatif: --gpus");
  if (a.count("speed")) req.speed = a["speed"].as<std::string>();
  req.backend = engine::parse_backend(a["backend"].as<std::string>());
  if (a.count("dp")) {
    req.dp = static_cast<int>(count_of(a, kDp, "lumos whatif: "));
  }
  if (a.count("topology")) req.topology = a["topology"].as<std::string>();
  req.hints = hints_from(a, "lumos whatif");
  if (a.count("traced-topology")) req.traced_topology = a["traced-topology"].as<std::string>();
  if (a.count("nic-bandwidth"))
    req.nic_gbps = cost::parse_bandwidth_gbytes_per_s(a["nic-bandwidth"].as<std::string>(),
                                                      "lumos whatif: --nic-bandwidth");
  const bool structural = std::any_of(std::begin(kStructuralFlags), std::end(kStructuralFlags),
                                      [&](const char* f) { return a.count(f) > 0; });
  LUMOS_EXPECT(!a.count("describe") ||
                   !(structural || a.count("dp") || a.count("gpus") || a.count("speed") ||
                     a.count("csv") || a.count("topology") || a.count("nic-bandwidth")),
               "lumos whatif: --describe prints the job the traces show; it takes no edit");
  LUMOS_EXPECT(structural || !(a.count("model") || a.count("model-file") || a.count("stack")),
               "lumos whatif: --model, --model-file and --stack describe the traced job for a "
               "structural edit (--pp, --layers, --hidden, --ffn, --heads, --seq, --tp, "
               "--interleave, --mbs, --gbs)");
  LUMOS_EXPECT(!structural || !a.count("timeline") || !is_stdout(a["timeline"].as<std::string>()),
               "lumos whatif: --timeline: give a file (standard output carries the report)");
  LUMOS_EXPECT(structural || !(a.count("timeline") || a.count("emit-traces") || a.count("gpu")),
               "lumos whatif: --timeline, --emit-traces and --gpu go with a structural edit (--pp, "
               "--layers, --hidden, --ffn, --heads, --seq, --tp, --interleave, --mbs, --gbs)");
  LUMOS_EXPECT(!structural || !(a.count("gpus") || a.count("speed") || a.count("csv")),
               "lumos whatif: --gpus, --speed and --csv replay the traced graph; a structural edit "
               "takes --gpu");
  if (a.count("timeline") && !is_stdout(a["timeline"].as<std::string>()))
    check_output_path(a["timeline"].as<std::string>());
  const graph::LoadedInput in =
      graph::load_job(a.count("input") ? a["input"].as<std::string>() : "");
  report::build_warnings(std::cerr, in.stats);
  for (const auto& w : in.warnings) std::cerr << "lumos whatif: " << w << '\n';
  if (a.count("describe")) {
    const auto render = a.count("json") ? report::job_structure_json : report::job_structure_text;
    const whatif::PeerWaits waits = whatif::peer_waits(in.graph, in.tables(), cost::embedded_db());
    const whatif::JobStructure js = estimate::describe_job(in, cost::embedded_db(), req.hints);
    warn_overridden(std::cerr, js, "lumos whatif");
    render(std::cout, in.label, js, &waits);
    return 0;
  }
  if (structural) return run_structural(a, in, req);
  LUMOS_EXPECT(!req.hints.any() || req.edits(),
               "lumos whatif: --traced and --group say what the traced job is, for --describe or "
               "an edit (--dp, --topology, --nic-bandwidth, or a structural edit)");
  Progress progress("variants", quiet(a));
  req.progress = progress.fn();
  const estimate::WhatifAnswer ans = estimate::run_whatif(in, req, cost::embedded_db());
  warn_overridden(std::cerr, ans.structure, "lumos whatif");
  if (!ans.unpriced_warning.empty())
    std::cerr << "lumos whatif: warning: " << ans.unpriced_warning << '\n';
  if (a.count("csv")) {
    write_output(a["csv"].as<std::string>(),
                 [&](std::ostream& os) { report::whatif_csv(os, ans); });
    if (is_stdout(a["csv"].as<std::string>())) return 0;  // the table is the output
  }
  (a.count("json") ? report::whatif_json : report::whatif_text)(std::cout, in.label, ans);
  return 0;
}

}  // namespace lumos::cli
