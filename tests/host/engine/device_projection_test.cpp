// The CUDA backend's projected rate: the issue bound follows the graph's predecessors per node,
// the state bound the memory level that holds a full GPU's in-flight state, and the projection
// is the lower of the two.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "engine/device_projection.hpp"
#include "graph/synthetic_graph.hpp"
#include "replay/replay_program.hpp"

namespace {

using lumos::engine::project_device_replay;

TEST(DeviceProjection, IsTheLowerOfTheIssueAndStateBounds) {
  const auto& db = lumos::cost::embedded_db();
  const auto g = lumos::graph::synthetic_graph(20000, 7);
  const auto prog = lumos::replay::compile_program(g);
  const auto p = project_device_replay(g, prog, db.gpu("h200"));
  EXPECT_EQ(p.gpu, "h200");
  EXPECT_NEAR(p.preds_per_node, static_cast<double>(g.num_edges()) / g.num_nodes(), 1e-12);
  // One warp instruction per SM partition and clock: half the FP32 FLOP rate.
  EXPECT_NEAR(p.thread_instructions_per_s, 67e12 / 2, 1e9);
  EXPECT_NEAR(p.issue_bound * p.instructions_per_node_variant, p.thread_instructions_per_s, 1.0);
  EXPECT_NEAR(p.state_bound * p.state_bytes_per_node_variant, p.state_bytes_per_s, 1.0);
  EXPECT_DOUBLE_EQ(p.projected, std::min(p.issue_bound, p.state_bound));
  EXPECT_EQ(p.limit, p.issue_bound <= p.state_bound ? "issue" : "state");
  // A full H200 holds 2048 threads on each of its 132 SMs, 16 B per register.
  EXPECT_DOUBLE_EQ(p.resident_state_bytes, 16.0 * prog.max_live * 2048 * 132);
}

TEST(DeviceProjection, MorePredecessorsCostMoreInstructionsAndBytes) {
  const auto& db = lumos::cost::embedded_db();
  const auto sparse = lumos::graph::synthetic_graph(5000, 1);
  auto dense = sparse;  // the same nodes, every edge counted twice
  dense.pred_index.clear();
  dense.pred_lag_us.clear();
  dense.pred_kind.clear();
  dense.pred_offset.assign(1, 0);
  for (uint32_t v = 0; v < sparse.num_nodes(); ++v) {
    for (int twice = 0; twice < 2; ++twice)
      for (uint32_t e = sparse.pred_offset[v]; e < sparse.pred_offset[v + 1]; ++e) {
        dense.pred_index.push_back(sparse.pred_index[e]);
        dense.pred_lag_us.push_back(sparse.pred_lag_us[e]);
        dense.pred_kind.push_back(sparse.pred_kind[e]);
      }
    dense.pred_offset.push_back(static_cast<uint32_t>(dense.pred_index.size()));
  }
  const auto a =
      project_device_replay(sparse, lumos::replay::compile_program(sparse), db.gpu("h100"));
  const auto b =
      project_device_replay(dense, lumos::replay::compile_program(dense), db.gpu("h100"));
  EXPECT_GT(b.instructions_per_node_variant, a.instructions_per_node_variant);
  EXPECT_GT(b.state_bytes_per_node_variant, a.state_bytes_per_node_variant);
  EXPECT_LT(b.projected, a.projected);
}

TEST(DeviceProjection, StateBeyondTheL2IsReadFromHbm) {
  const auto& db = lumos::cost::embedded_db();
  const auto g = lumos::graph::synthetic_graph(5000, 3);
  auto prog = lumos::replay::compile_program(g);
  prog.max_live = 1;  // 4.3 MB resident: in the 50 MiB L2
  const auto small = project_device_replay(g, prog, db.gpu("h200"));
  EXPECT_EQ(small.state_level, "L2");
  prog.max_live = 1000;  // 4.3 GB resident
  const auto large = project_device_replay(g, prog, db.gpu("h200"));
  EXPECT_EQ(large.state_level, "HBM");
  EXPECT_DOUBLE_EQ(large.state_bytes_per_s, 4.8e12);
}

}  // namespace
