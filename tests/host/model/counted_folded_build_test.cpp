// A schedule whose steady state folds is counted by building it: the count carries that graph,
// the first build given the count takes it (the same graph a build without the count makes), and
// a later build given the same count builds its own.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.hpp"
#include "host/model/layout_cases.hpp"
#include "model/step_graph.hpp"
#include "replay/reference_replay.hpp"

using namespace lumos::model;
using lumos::model::testing::Case;
using lumos::model::testing::price;
using lumos::model::testing::Priced;

namespace {

// Gpt44bInterleaved of layout_cases.hpp with 64 micro-batches per pipeline: its steady state
// folds.
Priced folding_case() {
  Case x{"Gpt44bInterleaved", "gpt3-44b", 8,     4,     1,    2, 2, 2, 1, 0,
         Recompute::kNone,    true,       false, false, false};
  x.gbs = 64 * x.dp * x.mbs;
  return price(x);
}

double step_time_us(const StepGraph& g) {
  const auto r = lumos::replay::reference_replay(g.graph);
  double end = 0;
  for (auto n : g.stage_end) end = std::max(end, r.finish_us[n]);
  return end;
}

}  // namespace

TEST(CountedFoldedBuild, TheFirstBuildTakesTheCountedGraphTheNextBuildsItsOwn) {
  const Priced p = folding_case();
  const StepGraph fresh = build_step_graph(p.m, p.c, p.l, p.k, kMaxStepGraphNodes, true);
  ASSERT_FALSE(fresh.microbatch_folds.empty());
  const StepGraphCount counted = count_step_graph(p.m, p.c, p.l, p.k, kMaxStepGraphNodes, true);
  ASSERT_TRUE(counted.built);
  EXPECT_EQ(counted.nodes, fresh.graph.num_nodes());
  const StepGraph first = build_step_graph(p.m, p.c, p.l, p.k, kMaxStepGraphNodes, true, &counted);
  EXPECT_FALSE(counted.built);  // taken, not copied
  const StepGraph second = build_step_graph(p.m, p.c, p.l, p.k, kMaxStepGraphNodes, true, &counted);
  for (const StepGraph* g : {&first, &second}) {
    EXPECT_EQ(g->graph.num_nodes(), fresh.graph.num_nodes());
    EXPECT_EQ(g->graph.num_edges(), fresh.graph.num_edges());
    EXPECT_EQ(g->slots.size(), fresh.slots.size());
    EXPECT_EQ(g->microbatch_folds.size(), fresh.microbatch_folds.size());
    EXPECT_EQ(step_time_us(*g), step_time_us(fresh));
  }
}

// A count below the counted graph's size still refuses the build.
TEST(CountedFoldedBuild, ABuildGivenTheCountKeepsItsNodeLimit) {
  const Priced p = folding_case();
  const StepGraphCount counted = count_step_graph(p.m, p.c, p.l, p.k, kMaxStepGraphNodes, true);
  ASSERT_TRUE(counted.built);
  EXPECT_THROW(build_step_graph(p.m, p.c, p.l, p.k, counted.nodes - 1, true, &counted),
               lumos::InputError);
}
