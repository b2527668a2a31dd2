// Jobs written by `lumos generate` and made to differ from the model on purpose, by one rule
// applied alike to the job at two configurations (docs/design.md "Trace-driven what-ifs"): the
// tests of the traced-graph edits check that the edit of one configuration agrees with the
// replay of the other under the same rule.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "estimate/generated_trace.hpp"
#include "graph/load_input.hpp"
#include "host/whatif/generated_job.hpp"

namespace lumos::testing {

using Rule = std::function<void(graph::Graph&)>;

// Every CPU operator and runtime call 30x slower.
inline void slow_cpu(graph::Graph& g) {
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.kind[v] == graph::NodeKind::kCpuOp || g.kind[v] == graph::NodeKind::kRuntime)
      g.dur_us[v] *= 30;
}

// The call that launches each norm kernel waits 2 ms longer (Python work between the modules).
inline void python_gap(graph::Graph& g) {
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != graph::NodeKind::kKernel || g.names[g.name[v]].rfind("rmsnorm_fwd", 0) != 0)
      continue;
    for (uint32_t k = g.pred_offset[v]; k < g.pred_offset[v + 1]; ++k)
      if (g.pred_kind[k] == graph::EdgeKind::kLaunch) g.dur_us[g.pred_index[k]] += 2000;
  }
}

// Every kernel off the compute stream (the pipeline sends and receives) 5x slower.
inline void slow_side_streams(graph::Graph& g) {
  std::map<uint32_t, double> busy;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.kind[v] == graph::NodeKind::kKernel && g.cls[v] != graph::NodeClass::kComm)
      busy[g.resource[v]] += g.dur_us[v];
  std::map<int32_t, uint32_t> compute;
  for (const auto& [res, us] : busy) {
    const int32_t rank = g.resources[res].rank;
    if (!compute.count(rank) || us > busy[compute[rank]]) compute[rank] = res;
  }
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.kind[v] == graph::NodeKind::kKernel &&
        g.resource[v] != compute[g.resources[g.resource[v]].rank])
      g.dur_us[v] *= 5;
}

// Small layers (a Llama shape at hidden 1024, 1024 tokens), so that the CPU matters: the
// kernels run tens of microseconds, as long as their launches.
inline model::ModelSpec small_model() {
  model::ModelSpec m = model::preset("llama3-8b");
  m.name = "small-llama", m.hidden = 1024, m.ffn = 3584, m.heads = 8, m.kv_heads = 8;
  m.head_dim = 128, m.seq = 1024, m.vocab = 32000;
  return m;
}

// The small model at `layers` layers, tp x pp x dp (two micro-batches per stage), v chunks per
// GPU.
inline estimate::EstimateRequest small_job(int pp, int64_t layers, int dp = 1, int v = 1,
                                           int tp = 1) {
  JobConfig c;
  c.tp = tp, c.pp = pp, c.dp = dp, c.gbs = 2 * pp * dp, c.mbs = 1, c.interleave = v;
  estimate::EstimateRequest r = job_request(c);
  r.model = small_model();
  r.model.layers = layers;
  return r;
}

// The job of `req`, written into `dir` (which must not exist yet), loaded, and the rule applied.
inline graph::LoadedInput modified_job(const estimate::EstimateRequest& req, const Rule& rule,
                                       const std::string& dir) {
  const auto run = estimate::run_estimate(req, cost::embedded_db());
  estimate::write_stage_traces(run.step, run.replay, dir, run.estimate.gpu);
  graph::LoadedInput in = graph::load_job(dir);
  rule(in.graph);
  return in;
}

}  // namespace lumos::testing
