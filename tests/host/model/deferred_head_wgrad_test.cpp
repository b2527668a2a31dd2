// Deferred output-layer weight gradients (Megatron-Core's defer_embedding_wgrad_compute with
// wgrad_deferral_limit): the first micro-batches' logits weight-gradient GEMMs leave their backward
// passes on the last pipeline stage and run after its last one; the work stays the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "host/model/slot_replay.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "replay/reference_replay.hpp"

using namespace lumos::model;
using lumos::estimate::EstimateRequest;
using lumos::estimate::run_estimate;

namespace {

// A two-stage Llama pipeline whose last stage the output layer paces (128K vocabulary over few
// layers), `m` micro-batches, the first `deferred` of them deferred.
EstimateRequest pipeline(int64_t m, int64_t deferred, int interleave = 1) {
  EstimateRequest r;
  r.model = preset("llama3-8b");
  r.model.layers = 4 * interleave;
  r.gpu = "h100";
  r.cfg.tp = 2, r.cfg.pp = 2, r.cfg.dp = 2, r.cfg.mbs = 1, r.cfg.gbs = 2 * m;
  r.cfg.interleave = interleave;
  r.cfg.sequence_parallel = true;
  r.cfg.distributed_optimizer = true;
  r.cfg.stack = "nemo-2024";
  r.cfg.deferred_head_wgrads = deferred;
  return r;
}

struct Built {
  ModelSpec m;
  ParallelConfig c;
  Layout l;
  StepCosts k;
};

Built build(const EstimateRequest& r, const char* gpu = "h100") {
  const auto& db = lumos::cost::embedded_db();
  Built b{r.model, r.cfg, check_layout(r.model, r.cfg), {}};
  const auto& spec = db.gpu(gpu);
  b.k = price_step(b.m, b.c, b.l, db, spec, db.default_topology_for(spec));
  return b;
}

// The graph's GEMMs named `name` on `stage`, in the order the stage launches them.
std::vector<lumos::graph::NodeId> stage_kernels(const StepGraph& g, int stage,
                                                const std::string& name) {
  std::vector<lumos::graph::NodeId> out;
  for (lumos::graph::NodeId n = 0; n < g.graph.num_nodes(); ++n)
    if (g.meta_of(n).stage == stage &&
        g.graph.names[g.graph.name[n]].find("(" + name + ")") != std::string::npos)
      out.push_back(n);
  return out;
}

}  // namespace

TEST(DeferredHeadWgrads, RunOnTheLastStageAfterItsLastBackwardPass) {
  const Built b = build(pipeline(4, 3));
  const StepGraph g = build_step_graph(b.m, b.c, b.l, b.k);
  EXPECT_TRUE(stage_kernels(g, 0, "logits weight grad").empty());
  const auto wgrad = stage_kernels(g, 1, "logits weight grad");
  const auto dgrad = stage_kernels(g, 1, "logits data grad");
  ASSERT_EQ(wgrad.size(), 4u);  // one per micro-batch: the work is the same
  ASSERT_EQ(dgrad.size(), 4u);
  // The fourth micro-batch computes its own after its data gradient; the three deferred ones
  // follow every backward pass, the fourth's layers included.
  EXPECT_GT(wgrad[0], dgrad[3]);
  const auto fc1 = stage_kernels(g, 1, "fc1 weight grad");
  ASSERT_FALSE(fc1.empty());
  EXPECT_GT(wgrad[1], fc1.back());
  EXPECT_LT(wgrad[0], fc1.back());
  const auto r = lumos::replay::reference_replay(g.graph);
  EXPECT_GE(r.start_us[wgrad[1]], r.finish_us[fc1.back()]);
}

TEST(DeferredHeadWgrads, MoveTheGemmsAndShortenAStepTheOutputLayerPaces) {
  const auto& db = lumos::cost::embedded_db();
  const auto plain = run_estimate(pipeline(8, 0), db).estimate;
  const auto deferred = run_estimate(pipeline(8, 2), db).estimate;
  const auto all = run_estimate(pipeline(8, ParallelConfig::kAllMicrobatches), db).estimate;
  const auto capped = run_estimate(pipeline(8, 1000), db).estimate;
  // Each deferred GEMM leaves the steady state the last stage paces; once the last stage ends
  // last, its own work bounds the step, wherever its GEMMs run.
  EXPECT_LT(deferred.step_time_us, plain.step_time_us);
  EXPECT_LE(all.step_time_us, deferred.step_time_us * (1 + 1e-12));
  EXPECT_GT(all.stages.back().end_us, all.stages.front().end_us);
  EXPECT_EQ(capped.step_time_us, all.step_time_us);
  auto gemm_us = [](const lumos::estimate::Estimate& e) {
    for (const auto& [name, us] : e.kernel_time_us)
      if (name == "gemm") return us;
    return 0.0;
  };
  EXPECT_NEAR(gemm_us(deferred), gemm_us(plain), 1e-9 * gemm_us(plain));
  EXPECT_NEAR(deferred.graph_model_flops, plain.graph_model_flops, 1e-9 * plain.graph_model_flops);
}

// A deferring layout is built whole (its first micro-batches differ from the rest), and its
// slots reprice it for another GPU to what that GPU's own graph replays to.
TEST(DeferredHeadWgrads, InterleavedLayoutIsBuiltWholeAndItsSlotsReprice) {
  const EstimateRequest r = pipeline(16, 6, 2);
  EXPECT_FALSE(folds_microbatches(r.cfg, 16));
  EXPECT_TRUE(folds_microbatches(pipeline(16, 0, 2).cfg, 16));
  const Built h100 = build(r), a100 = build(r, "a100");
  ASSERT_TRUE(same_structure(h100.k, a100.k));
  const StepGraph g = build_step_graph(h100.m, h100.c, h100.l, h100.k, kMaxStepGraphNodes, true);
  EXPECT_TRUE(g.microbatch_folds.empty());
  const StepGraph own = build_step_graph(a100.m, a100.c, a100.l, a100.k);
  std::vector<std::vector<double>> slots;
  const auto batch =
      lumos::model::testing::replay_with(g, {h100.k, a100.k}, {kUnitSpeeds, kUnitSpeeds}, &slots);
  const auto ref = lumos::replay::reference_replay(own.graph);
  double end = 0;
  for (auto n : own.stage_end) end = std::max(end, ref.finish_us[n]);
  EXPECT_NEAR(batch.makespan_us[1], end, 1e-9 * end);
}

TEST(DeferredHeadWgrads, NeedAPipelineWithoutFsdp) {
  EstimateRequest r = pipeline(4, 2);
  r.cfg.pp = 1, r.cfg.dp = 4;
  EXPECT_THROW(check_layout(r.model, r.cfg), lumos::InputError);
  r = pipeline(4, 2);
  r.cfg.fsdp = true;
  EXPECT_THROW(check_layout(r.model, r.cfg), lumos::InputError);
  r = pipeline(4, -1);
  EXPECT_THROW(check_layout(r.model, r.cfg), lumos::InputError);
  // A layout without a pipeline defers nothing, whatever the count says.
  ParallelConfig c;
  c.deferred_head_wgrads = 5;
  EXPECT_EQ(deferred_head_wgrad_count(c, 8), 0);
  c.pp = 2;
  EXPECT_EQ(deferred_head_wgrad_count(c, 8), 5);
  EXPECT_EQ(deferred_head_wgrad_count(c, 3), 3);
}

// Until the drain, the last stage keeps each deferred micro-batch's 16-bit logits gradient
// (sequence x vocabulary / TP) and the output layer's sequence-parallel input shard.
TEST(DeferredHeadWgrads, HoldTheirGradientsOnTheLastStageUntilTheDrain) {
  const auto& db = lumos::cost::embedded_db();
  const auto plain = run_estimate(pipeline(8, 0), db).estimate;
  const auto deferred = run_estimate(pipeline(8, 5), db).estimate;
  const double tokens = static_cast<double>(deferred.model.seq),
               vocab = static_cast<double>(deferred.layout.padded_vocab),
               hidden = static_cast<double>(deferred.model.hidden);
  const double held = 5 * 2 * tokens * (vocab / 2 + hidden / 2);  // TP 2, sequence parallel
  EXPECT_DOUBLE_EQ(deferred.stages.front().memory.activations_bytes,
                   plain.stages.front().memory.activations_bytes);
  EXPECT_NEAR(deferred.stages.back().memory.activations_bytes -
                  plain.stages.back().memory.activations_bytes,
              held, 1e-9 * held);
}
