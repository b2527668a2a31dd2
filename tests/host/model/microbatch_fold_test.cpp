// Folded micro-batches: a graph whose steady-state pipeline periods are a max-plus matrix power
// replays every configuration of its structure to the step time and busy times of the graph
// with every micro-batch, and its size does not grow with the number of micro-batches.
#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "host/model/layout_cases.hpp"
#include "host/model/slot_replay.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "replay/batch_replay.hpp"

using namespace lumos::model;
using lumos::model::testing::Case;
using lumos::model::testing::price;
using lumos::model::testing::Priced;
using lumos::model::testing::replay_with;

namespace {

// The case with `microbatches` micro-batches per pipeline.
Priced with_microbatches(Case x, int64_t microbatches) {
  x.gbs = microbatches * x.dp * x.mbs;
  return price(x);
}

// Configurations of the structure: other GPUs, and random class speeds (CPU calls at their own:
// folded layers split groups of kernel launches); `scale` also scales every priced op as a trace
// calibration does, with its own launch overhead.
void configurations(const Priced& p, bool calibrated, std::vector<StepCosts>* costs,
                    std::vector<ClassSpeeds>* speeds) {
  const auto& db = lumos::cost::embedded_db();
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> factor(0.25f, 4.0f);
  for (const char* gpu : {"h100", "a100", "b200"}) {
    const auto& spec = db.gpu(gpu);
    StepCosts k = price_step(p.m, p.c, p.l, db, spec, db.default_topology_for(spec));
    if (!same_structure(p.k, k)) continue;
    if (calibrated) {
      for (auto* list : {&k.layer_fwd, &k.layer_bwd, &k.layer_recompute, &k.embed_fwd, &k.embed_bwd,
                         &k.head_fwd, &k.head_bwd})
        for (KernelOp& op : *list) op.dur_us *= factor(rng);
      k.p2p.dur_us *= factor(rng);
      k.cpu_launch_us *= factor(rng);
    }
    costs->push_back(k);
    speeds->push_back(kUnitSpeeds);
    costs->push_back(k);
    speeds->push_back(ClassSpeeds{1, 1, factor(rng), factor(rng), 1});
  }
}

// Folds `p` and checks every configuration's step time, compute-stream busy time and kernel
// time by power class against the graph of every micro-batch.
void expect_same_as_unfolded(const Priced& p, bool calibrated, const std::string& what) {
  const StepGraph full = build_step_graph(p.m, p.c, p.l, p.k);
  const StepGraph folded = build_step_graph(p.m, p.c, p.l, p.k, kMaxStepGraphNodes, true);
  EXPECT_GE(step_graph_size(p.m, p.c, p.l, p.k, UINT64_MAX - 1, true), folded.graph.num_nodes());
  std::cout << what << ": " << full.graph.num_nodes() << " nodes, folded "
            << folded.graph.num_nodes() << " (" << folded.microbatch_folds.size()
            << " micro-batch folds)\n";
  std::vector<StepCosts> costs;
  std::vector<ClassSpeeds> speeds;
  configurations(p, calibrated, &costs, &speeds);
  ASSERT_GE(costs.size(), 2u);
  std::vector<std::vector<double>> full_slots, folded_slots;
  const auto a = replay_with(full, costs, speeds, &full_slots);
  const auto b = replay_with(folded, costs, speeds, &folded_slots);
  for (uint32_t v = 0; v < costs.size(); ++v) {
    EXPECT_NEAR(b.makespan_us[v], a.makespan_us[v], 1e-9 * a.makespan_us[v]) << what << " " << v;
    const double busy = compute_busy_us(full, full_slots[v]);
    EXPECT_NEAR(compute_busy_us(folded, folded_slots[v]), busy, 1e-9 * busy) << what << " " << v;
    const KernelBusy kf = kernel_busy_us(full, full_slots[v]),
                     kd = kernel_busy_us(folded, folded_slots[v]);
    const double total = kf.compute_bound_us + kf.memory_bound_us + kf.comm_us;
    EXPECT_NEAR(kd.compute_bound_us, kf.compute_bound_us, 1e-9 * total) << what << " " << v;
    EXPECT_NEAR(kd.memory_bound_us, kf.memory_bound_us, 1e-9 * total) << what << " " << v;
    EXPECT_NEAR(kd.comm_us, kf.comm_us, 1e-9 * total) << what << " " << v;
  }
}

// Micro-batch counts the layout allows: fewer than its stages, about as many, and many more.
std::vector<int64_t> microbatch_counts(const Case& x) {
  std::vector<int64_t> out;
  const int64_t step = x.interleave > 1 ? x.pp : 1;
  for (int64_t m : {1, 2, 3, 4, 6, 8, 9, 12, 16, 24, 40, 64})
    if (m % step == 0) out.push_back(m);
  return out;
}

}  // namespace

class FoldedMicrobatches : public ::testing::TestWithParam<Case> {};

TEST_P(FoldedMicrobatches, EveryConfigurationReplaysToTheUnfoldedStepAndBusyTimes) {
  for (int64_t m : microbatch_counts(GetParam()))
    expect_same_as_unfolded(with_microbatches(GetParam(), m), false,
                            GetParam().name + " at " + std::to_string(m) + " micro-batches");
}

TEST_P(FoldedMicrobatches, TraceCalibratedCostsReplayToTheUnfoldedStepTimes) {
  const int64_t m = GetParam().interleave > 1 ? 8 * GetParam().pp : 24;
  expect_same_as_unfolded(with_microbatches(GetParam(), m), true,
                          GetParam().name + " calibrated at " + std::to_string(m));
}

INSTANTIATE_TEST_SUITE_P(Layouts, FoldedMicrobatches,
                         ::testing::ValuesIn(lumos::model::testing::layout_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(FoldedMicrobatches, GraphSizeDoesNotGrowWithTheMicrobatches) {
  for (const Case& x : lumos::model::testing::layout_cases()) {
    const int64_t step = x.interleave > 1 ? x.pp : 1;
    const Priced a = with_microbatches(x, 32 * step), b = with_microbatches(x, 4096);
    const StepGraph ga = build_step_graph(a.m, a.c, a.l, a.k, kMaxStepGraphNodes, true);
    const StepGraph gb = build_step_graph(b.m, b.c, b.l, b.k, kMaxStepGraphNodes, true);
    EXPECT_EQ(ga.microbatch_folds.size(), 1u) << x.name;
    EXPECT_EQ(ga.graph.num_nodes(), gb.graph.num_nodes()) << x.name;
    EXPECT_EQ(ga.graph.num_edges(), gb.graph.num_edges()) << x.name;
  }
}

TEST(FoldedMicrobatches, FourThousandMicrobatchesReplayToTheUnfoldedStepTime) {
  // 1F1B with data-parallel buckets and interleaving, the largest count a test builds unfolded.
  for (const char* name : {"Gpt15bDefault", "Gpt44bInterleaved"}) {
    for (const Case& x : lumos::model::testing::layout_cases())
      if (x.name == name)
        expect_same_as_unfolded(with_microbatches(x, 4096), false,
                                x.name + " at 4096 micro-batches");
  }
}
