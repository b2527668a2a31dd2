// Flattening a draft into the CSR IR: each node's predecessors come out sorted by id, also for a
// node with very many of them (a rendezvous of thousands of ranks), in linear-ish time.
#include <gtest/gtest.h>

#include <chrono>

#include "graph/flatten.hpp"

using namespace lumos::graph;

TEST(Flatten, ManyPredecessorsComeOutSortedAndStable) {
  Draft d;
  d.nodes.resize(1);  // the origin
  const uint32_t n = 50000;
  for (uint32_t i = 0; i < n + 1; ++i) d.nodes.push_back({});
  const uint32_t sink = n + 1;
  for (uint32_t i = 1; i <= n; ++i) d.edges.push_back({0, i, EdgeKind::kOrigin, 0});
  // Reverse order, and one predecessor twice with different lags (kept in draft order).
  for (uint32_t i = n; i >= 1; --i) d.edges.push_back({i, sink, EdgeKind::kCrossRank, 1.0 * i});
  d.edges.push_back({7, sink, EdgeKind::kCrossRank, -1});
  std::vector<NodeId> id;
  const Graph g = flatten(
      d, &id, [](uint32_t) { return std::string("n"); }, "test");
  const NodeId s = id[sink];
  ASSERT_EQ(g.pred_offset[s + 1] - g.pred_offset[s], n + 1);
  for (uint32_t k = g.pred_offset[s] + 1; k < g.pred_offset[s + 1]; ++k)
    EXPECT_LE(g.pred_index[k - 1], g.pred_index[k]);
  for (uint32_t k = g.pred_offset[s]; k + 1 < g.pred_offset[s + 1]; ++k)
    if (g.pred_index[k] == id[7] && g.pred_index[k + 1] == id[7]) {
      EXPECT_EQ(g.pred_lag_us[k], 7.0);
      EXPECT_EQ(g.pred_lag_us[k + 1], -1.0);
    }
}
