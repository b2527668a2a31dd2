// Folded layers: a graph whose runs of identical layers are max-plus matrices replays every
// configuration of its structure (other GPUs, networks, class speeds) to the step time and
// compute-stream busy time of the full graph, with fewer nodes.
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

struct Replayed {
  double makespan_us = 0, compute_busy_us = 0;
};

}  // namespace

class FoldedLayers : public ::testing::TestWithParam<Case> {};

TEST_P(FoldedLayers, FoldedGraphGivesTheFullGraphsStepAndBusyTimes) {
  const Priced p = price(GetParam());
  const auto& db = lumos::cost::embedded_db();
  const StepGraph full = build_step_graph(p.m, p.c, p.l, p.k);
  const StepGraph folded = build_step_graph(p.m, p.c, p.l, p.k, kMaxStepGraphNodes, true);
  EXPECT_LE(folded.graph.num_nodes(), full.graph.num_nodes());
  EXPECT_GE(step_graph_size(p.m, p.c, p.l, p.k, UINT64_MAX - 1, true), folded.graph.num_nodes());
  std::cout << GetParam().name << ": " << full.graph.num_nodes() << " nodes, folded "
            << folded.graph.num_nodes() << " (" << folded.folds.size() << " folds)\n";
  // Configurations of the structure: other GPUs and networks, and random class speeds.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> factor(0.25f, 4.0f);
  std::vector<StepCosts> costs;
  std::vector<ClassSpeeds> speeds;
  for (const char* gpu : {"h100", "a100", "h200", "b200"}) {
    const auto& spec = db.gpu(gpu);
    StepCosts k = price_step(p.m, p.c, p.l, db, spec, db.default_topology_for(spec));
    if (!same_structure(p.k, k)) continue;
    for (int rep = 0; rep < 2; ++rep) {
      costs.push_back(k);
      // CPU calls at their own speed: a folded run splits launch groups, which only starts
      // kernels at the same times while launches take their traced time.
      speeds.push_back(rep == 0 ? kUnitSpeeds : ClassSpeeds{1, 1, factor(rng), factor(rng), 1});
    }
  }
  ASSERT_GE(costs.size(), 2u);
  std::vector<std::vector<double>> full_slots, folded_slots;
  const auto a = replay_with(full, costs, speeds, &full_slots);
  const auto b = replay_with(folded, costs, speeds, &folded_slots);
  std::vector<uint32_t> compute_streams;
  for (uint32_t r = 0; r < full.graph.resources.size(); ++r)
    if (full.graph.resources[r].kind == lumos::graph::ResourceKind::kStream &&
        full.graph.resources[r].b == kStreamIds[kComputeStream])
      compute_streams.push_back(r);
  for (uint32_t v = 0; v < costs.size(); ++v) {
    EXPECT_NEAR(b.makespan_us[v], a.makespan_us[v], 1e-9 * a.makespan_us[v]) << v;
    double busy = 0;
    for (uint32_t r : compute_streams) busy += a.resource_busy_us[r][v];
    EXPECT_NEAR(compute_busy_us(full, full_slots[v]), busy, 1e-9 * busy) << v;
    EXPECT_NEAR(compute_busy_us(folded, folded_slots[v]), busy, 1e-9 * busy) << v;
    // Kernel time by power class: the full graph's kernels one by one, and the folded graph's
    // counts, agree.
    double every_kernel_us = 0;
    const std::vector<uint32_t> node_slot = full.node_slots();
    for (size_t n = 0; n < node_slot.size(); ++n)
      if (node_slot[n] != lumos::replay::VariantBatch::kNoSlot &&
          full.meta_of(static_cast<lumos::graph::NodeId>(n)).stream >= 0)
        every_kernel_us += full_slots[v][node_slot[n]];
    const KernelBusy kf = kernel_busy_us(full, full_slots[v]),
                     kd = kernel_busy_us(folded, folded_slots[v]);
    const double total = kf.compute_bound_us + kf.memory_bound_us + kf.comm_us;
    EXPECT_NEAR(total, every_kernel_us, 1e-9 * total) << v;
    EXPECT_GT(kf.compute_bound_us, 0);
    EXPECT_GT(kf.memory_bound_us, 0);
    EXPECT_NEAR(kd.compute_bound_us, kf.compute_bound_us, 1e-9 * total) << v;
    EXPECT_NEAR(kd.memory_bound_us, kf.memory_bound_us, 1e-9 * total) << v;
    EXPECT_NEAR(kd.comm_us, kf.comm_us, 1e-9 * total) << v;
  }
}

TEST(FoldedLayers, DeepPipelinesFoldToAFractionOfTheNodes) {
  Case x = lumos::model::testing::layout_cases().front();
  x.layers = 32;
  x.gbs = 64;
  const Priced p = price(x);
  const uint64_t full = step_graph_size(p.m, p.c, p.l, p.k);
  const StepGraph folded = build_step_graph(p.m, p.c, p.l, p.k, kMaxStepGraphNodes, true);
  std::cout << "32 layers, 2 stages, 16 micro-batches: " << full << " nodes, folded "
            << folded.graph.num_nodes() << "\n";
  EXPECT_LT(folded.graph.num_nodes() * 4, full);
  const StepGraph g = build_step_graph(p.m, p.c, p.l, p.k);
  std::vector<std::vector<double>> s1, s2;
  const auto a = replay_with(g, {p.k}, {kUnitSpeeds}, &s1);
  const auto b = replay_with(folded, {p.k}, {kUnitSpeeds}, &s2);
  EXPECT_NEAR(b.makespan_us[0], a.makespan_us[0], 1e-9 * a.makespan_us[0]);
}

INSTANTIATE_TEST_SUITE_P(Layouts, FoldedLayers,
                         ::testing::ValuesIn(lumos::model::testing::layout_cases()),
                         [](const auto& info) { return info.param.name; });
