// step_graph_size counts the step graph with the code that builds it: it equals the built graph's
// node count for every kind of layout, and stops counting past its limit.
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "host/model/layout_cases.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"

using namespace lumos::model;
using lumos::model::testing::Case;
using lumos::model::testing::price;
using lumos::model::testing::Priced;

class StepGraphSize : public ::testing::TestWithParam<Case> {};

TEST_P(StepGraphSize, EqualsTheBuiltGraphsNodeCount) {
  const Priced p = price(GetParam());
  const uint64_t n = step_graph_size(p.m, p.c, p.l, p.k);
  const StepGraph g = build_step_graph(p.m, p.c, p.l, p.k);
  EXPECT_EQ(n, g.graph.num_nodes());
  // Counting stops past its limit; building refuses a graph above it.
  EXPECT_EQ(step_graph_size(p.m, p.c, p.l, p.k, n), n);
  EXPECT_EQ(step_graph_size(p.m, p.c, p.l, p.k, n - 1), n);
  EXPECT_EQ(step_graph_size(p.m, p.c, p.l, p.k, n / 2), n / 2 + 1);
  EXPECT_NO_THROW(build_step_graph(p.m, p.c, p.l, p.k, n));
  EXPECT_THROW(build_step_graph(p.m, p.c, p.l, p.k, n - 1), lumos::InputError);
}

INSTANTIATE_TEST_SUITE_P(Layouts, StepGraphSize,
                         ::testing::ValuesIn(lumos::model::testing::layout_cases()),
                         [](const auto& info) { return info.param.name; });
