// A built step graph keeps each node's slot as the build left them (StepGraph::node_slot), so a
// sweep's batches need not read every node's meta again: they must be the slots the meta give,
// for whole, layer-folded and micro-batch-folded graphs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "host/model/layout_cases.hpp"
#include "model/step_graph.hpp"

using namespace lumos::model;
using lumos::model::testing::layout_cases;
using lumos::model::testing::price;
using lumos::model::testing::Priced;

namespace {

// Each node's slot read through its meta, as a graph without the kept slots gives them.
std::vector<uint32_t> slots_from_meta(const StepGraph& g) {
  std::vector<uint32_t> out(g.graph.num_nodes(), UINT32_MAX);
  for (lumos::graph::NodeId n = 0; n < g.graph.num_nodes(); ++n)
    if (g.meta_of(n).slot >= 0) out[n] = static_cast<uint32_t>(g.meta_of(n).slot);
  return out;
}

}  // namespace

TEST(NodeSlots, KeptSlotsAreTheMetasForEveryLayoutCase) {
  for (const auto& x : layout_cases()) {
    Priced p = price(x);
    for (int64_t gbs : {p.c.gbs, int64_t{64} * p.c.dp * p.c.mbs}) {  // the second folds
      p.c.gbs = gbs;
      p.l = check_layout(p.m, p.c);
      for (const bool fold : {false, true}) {
        const StepGraph g = build_step_graph(p.m, p.c, p.l, p.k, kMaxStepGraphNodes, fold);
        ASSERT_EQ(g.node_slot.size(), g.graph.num_nodes()) << x.name;
        const std::vector<uint32_t> want = slots_from_meta(g);
        EXPECT_EQ(g.node_slots(), want) << x.name << " gbs " << gbs << " fold " << fold;
        EXPECT_NE(std::count(want.begin(), want.end(), UINT32_MAX),
                  static_cast<std::ptrdiff_t>(want.size()))
            << "some node has a slot";
        StepGraph without = g;
        without.node_slot.clear();
        EXPECT_EQ(without.node_slots(), want) << x.name;
      }
    }
  }
}
