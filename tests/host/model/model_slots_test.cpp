// Model slots: a graph built once replays other GPUs and networks of the same structure through
// the batch engine, with each kernel kind's duration from the cost model, and gives what
// building and replaying each configuration's own graph gives.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "host/model/layout_cases.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "replay/batch_replay.hpp"
#include "replay/reference_replay.hpp"

using namespace lumos::model;
using lumos::model::testing::Case;
using lumos::model::testing::price;
using lumos::model::testing::Priced;

namespace {

struct Config {
  std::string gpu, topology;  // "" = the GPU's default topology
};

StepCosts price_on(const Priced& p, const Config& c) {
  const auto& db = lumos::cost::embedded_db();
  const auto& gpu = db.gpu(c.gpu);
  return price_step(p.m, p.c, p.l, db, gpu,
                    c.topology.empty() ? db.default_topology_for(gpu) : db.topology(c.topology));
}

}  // namespace

class ModelSlots : public ::testing::TestWithParam<Case> {};

TEST_P(ModelSlots, OneGraphReplaysOtherGpusAndNetworksAsTheirOwnGraphsDo) {
  const Priced p = price(GetParam());
  const StepGraph g = build_step_graph(p.m, p.c, p.l, p.k);
  // Every GPU kernel that takes time has a kind; the slots give back the graph's own durations.
  const std::vector<uint32_t> node_slot = g.node_slots();
  const std::vector<double> own = model_slot_durations(g, p.k);
  ASSERT_EQ(own.size(), g.slots.size());
  for (lumos::graph::NodeId n = 0; n < g.graph.num_nodes(); ++n) {
    if (g.graph.kind[n] == lumos::graph::NodeKind::kKernel && g.graph.dur_us[n] > 0)
      EXPECT_NE(node_slot[n], UINT32_MAX) << g.graph.names[g.graph.name[n]];
    if (node_slot[n] != UINT32_MAX) EXPECT_EQ(own[node_slot[n]], g.graph.dur_us[n]);
  }
  const std::vector<Config> configs = {
      {"h100", ""},         {"a100", ""},          {"h200", ""},          {"b200", ""},
      {"h100", "dgx-a100"}, {"h100", "echo-a100"}, {"h100-96gb-500w", ""}};
  std::vector<Config> same;
  std::vector<StepCosts> costs;
  for (const Config& c : configs) {
    StepCosts k = price_on(p, c);
    if (!same_structure(p.k, k)) continue;
    same.push_back(c);
    costs.push_back(std::move(k));
  }
  std::string names;
  for (const Config& c : same) names += " " + c.gpu + (c.topology.empty() ? "" : "/" + c.topology);
  std::cout << "configurations sharing the graph:" << names << "\n";
  ASSERT_GE(same.size(), 3u) << "too few configurations share the H100 graph's structure";
  lumos::replay::VariantBatch b =
      lumos::replay::VariantBatch::identity(static_cast<uint32_t>(same.size()));
  b.node_slot = node_slot;
  b.slots = static_cast<uint32_t>(g.slots.size());
  b.slot_us.resize(static_cast<size_t>(b.slots) * b.count);
  for (uint32_t v = 0; v < b.count; ++v) {
    const std::vector<double> d = model_slot_durations(g, costs[v]);
    for (uint32_t s = 0; s < b.slots; ++s) b.slot_us[static_cast<size_t>(s) * b.count + v] = d[s];
  }
  const auto cpu = lumos::replay::batch_replay_cpu(g.graph, b);
  const auto body = lumos::replay::batch_replay_device_body(g.graph, b);
  const auto ref = lumos::replay::batch_replay_reference(g.graph, b);
  for (uint32_t v = 0; v < b.count; ++v) {
    const StepGraph own_graph = build_step_graph(p.m, p.c, p.l, costs[v]);
    const double expect = lumos::replay::reference_replay(own_graph.graph).makespan_us;
    const std::string what = same[v].gpu + " " + same[v].topology;
    EXPECT_NEAR(cpu.makespan_us[v], expect, 1e-9 * expect) << what;
    EXPECT_NEAR(body.makespan_us[v], expect, 1e-9 * expect) << what;
    EXPECT_NEAR(ref.makespan_us[v], expect, 1e-9 * expect) << what;
    double busy = 0, own_busy = 0;
    for (int c = 0; c < lumos::replay::kNumNodeClasses; ++c) busy += cpu.busy_us[c][v];
    for (double d : own_graph.graph.dur_us) own_busy += d;
    EXPECT_NEAR(busy, own_busy, 1e-9 * own_busy) << what;
  }
}

TEST(ModelSlots, AnotherStructureIsRefused) {
  const Priced p = price(lumos::model::testing::layout_cases().front());
  Priced other = price(lumos::model::testing::layout_cases()[1]);
  EXPECT_FALSE(same_structure(p.k, other.k));
  const StepGraph g = build_step_graph(p.m, p.c, p.l, p.k);
  other.k.layer_fwd.clear();
  EXPECT_THROW(model_slot_durations(g, other.k), lumos::InputError);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ModelSlots,
                         ::testing::ValuesIn(lumos::model::testing::layout_cases()),
                         [](const auto& info) { return info.param.name; });
