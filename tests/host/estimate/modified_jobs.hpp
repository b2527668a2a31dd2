// Jobs written by `lumos generate` and made to differ from the model on purpose, by one rule
// applied alike at every configuration (docs/design.md "Trace-driven what-ifs"): the edit of
// the job at configuration A must then agree with the same-rule job at configuration B.
#pragma once
#include <functional>
#include <string>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "estimate/trace_whatif.hpp"
#include "graph/graph.hpp"
#include "graph/load_input.hpp"
#include "host/whatif/generated_job.hpp"

namespace lumos::testing {

using JobRule = std::function<void(graph::Graph&)>;

// Every CPU operator and runtime call `factor` times slower.
inline void slow_cpu_by(graph::Graph& g, double factor) {
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.kind[v] == graph::NodeKind::kCpuOp || g.kind[v] == graph::NodeKind::kRuntime)
      g.dur_us[v] *= factor;
}

// The call that launches each norm kernel waits `gap_us` longer (Python work between modules).
inline void python_gap_of(graph::Graph& g, double gap_us) {
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != graph::NodeKind::kKernel || g.names[g.name[v]].rfind("rmsnorm_fwd", 0) != 0)
      continue;
    for (uint32_t k = g.pred_offset[v]; k < g.pred_offset[v + 1]; ++k)
      if (g.pred_kind[k] == graph::EdgeKind::kLaunch) g.dur_us[g.pred_index[k]] += gap_us;
  }
}

// Small layers (a Llama shape at hidden 1024, 1024 tokens), so that the CPU matters.
inline model::ModelSpec small_llama() {
  model::ModelSpec m = model::preset("llama3-8b");
  m.name = "small-llama", m.hidden = 1024, m.ffn = 3584, m.heads = 8, m.kv_heads = 8;
  m.head_dim = 128, m.seq = 1024, m.vocab = 32000;
  return m;
}

// The generated job of `req` written to `dir`, loaded, and the rule applied to its graph.
inline graph::LoadedInput modified_job(const estimate::EstimateRequest& req, const JobRule& rule,
                                       const std::string& dir) {
  const auto run = estimate::run_estimate(req, cost::embedded_db());
  estimate::write_stage_traces(run.step, run.replay, dir, run.estimate.gpu);
  graph::LoadedInput in = graph::load_job(dir);
  rule(in.graph);
  return in;
}

}  // namespace lumos::testing
