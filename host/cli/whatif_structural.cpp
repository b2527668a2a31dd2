#include "cli/whatif_structural.hpp"

#include <iostream>
#include <string>
#include <vector>

#include "cli/traced_options.hpp"
#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/generated_trace.hpp"
#include "estimate/trace_structural.hpp"
#include "model/model_spec.hpp"
#include "report/structural_report.hpp"
#include "report/timeline_writer.hpp"

namespace lumos::cli {

int run_structural(const cxxopts::ParseResult& a, const graph::LoadedInput& in,
                   const estimate::WhatifRequest& w) {
  LUMOS_EXPECT(
      w.traced_topology.empty() && w.nic_gbps <= 0,
      "lumos whatif: --traced-topology and --nic-bandwidth go with --dp alone; a structural "
      "edit takes --topology");
  estimate::StructuralRequest req;
  if (a.count("model-file")) {
    LUMOS_EXPECT(!a.count("model"), "lumos whatif: give --model or --model-file, not both");
    req.model = model::load_model_toml(a["model-file"].as<std::string>());
  } else if (a.count("model")) {
    req.model = model::preset(a["model"].as<std::string>());
  }
  if (a.count("stack")) req.stack = a["stack"].as<std::string>();
  if (a.count("traced-gpu")) req.gpu = a["traced-gpu"].as<std::string>();
  if (a.count("gpu")) req.target_gpu = a["gpu"].as<std::string>();
  req.topology = w.topology;
  estimate::StructuralEdit& e = req.edit;
  auto i64 = [&](const CountOption& k, std::optional<int64_t>& to) {
    if (a.count(k.name)) to = count_of(a, k, "lumos whatif: ");
  };
  auto i32 = [&](const CountOption& k, std::optional<int>& to) {
    if (a.count(k.name)) to = static_cast<int>(count_of(a, k, "lumos whatif: "));
  };
  i64(kLayers, e.layers), i64(kHidden, e.hidden), i64(kFfn, e.ffn), i64(kHeads, e.heads);
  i64(kSeq, e.seq), i64(kMbs, e.mbs), i64(kGbs, e.gbs);
  i32(kTp, e.tp), i32(kPp, e.pp), i32(kInterleave, e.interleave);
  if (w.dp > 0) e.dp = w.dp;
  req.hints = w.hints;
  LUMOS_EXPECT(req.model || !(a.count("timeline") || a.count("emit-traces")),
               "lumos whatif: --timeline and --emit-traces write the model's rebuild: give --model "
               "or --model-file");
  const estimate::StructuralAnswer ans =
      estimate::run_structural_whatif(in, req, cost::embedded_db());
  warn_overridden(std::cerr, ans.structure, "lumos whatif");
  std::vector<std::string> files;
  if (a.count("timeline"))
    report::write_timeline(ans.edited.step.graph, ans.edited.replay,
                           a["timeline"].as<std::string>());
  if (a.count("emit-traces"))
    files =
        estimate::write_stage_traces(ans.edited.step, ans.edited.replay,
                                     a["emit-traces"].as<std::string>(), ans.edited.estimate.gpu);
  if (a.count("json")) {
    report::structural_json(std::cout, in.label, ans);
  } else {
    report::structural_text(std::cout, in.label, ans);
    for (const auto& f : files) std::cout << "  wrote " << f << '\n';
  }
  return 0;
}

}  // namespace lumos::cli
