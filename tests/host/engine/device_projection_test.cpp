// The CUDA backend's projected rate: the issue bound follows the graph's predecessors per node,
// the shared-memory bound the operands kept there, the state bound the memory level that holds
// a full GPU's long-lived registers, and the projection is the lowest of the three.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"
#include "engine/device_projection.hpp"
#include "graph/synthetic_graph.hpp"
#include "replay/lanes_thread.hpp"
#include "replay/packed_program.hpp"
#include "replay/replay_program.hpp"

namespace {

using lumos::engine::project_device_replay;

TEST(DeviceProjection, IsTheLowestOfTheIssueSharedAndStateBounds) {
  const auto& db = lumos::cost::embedded_db();
  const auto g = lumos::graph::synthetic_graph(20000, 7);
  const auto prog = lumos::replay::compile_program(g);
  for (const bool path : {true, false}) {
    const auto p = project_device_replay(g, prog, db.gpu("h200"), path);
    EXPECT_EQ(p.gpu, "h200");
    EXPECT_EQ(p.critical_path, path);
    EXPECT_NEAR(p.preds_per_node, static_cast<double>(g.num_edges()) / g.num_nodes(), 1e-12);
    // One warp instruction per SM partition and clock: half the FP32 FLOP rate.
    EXPECT_NEAR(p.thread_instructions_per_s, 67e12 / 2, 1e9);
    EXPECT_NEAR(p.issue_bound * p.issue_slots_per_node_variant, p.thread_instructions_per_s, 1.0);
    // FP64 arithmetic (and the path's float conversions) take more than one issue slot.
    EXPECT_GT(p.issue_slots_per_node_variant, p.instructions_per_node_variant);
    EXPECT_NEAR(p.shared_bound * p.shared_bytes_per_node_variant, p.shared_bytes_per_s, 1.0);
    EXPECT_DOUBLE_EQ(p.projected, std::min({p.issue_bound, p.shared_bound, p.state_bound}));
    // The short-lived registers are in shared memory, the long-lived ones global state.
    EXPECT_EQ(p.shared_registers, lumos::replay::lanes_shared_regs(prog.short_regs, path));
    EXPECT_GT(p.state_bytes_per_node_variant, 0.0);
    EXPECT_NEAR(p.state_bound * p.state_bytes_per_node_variant, p.state_bytes_per_s, 1.0);
    EXPECT_GT(p.warps_per_sm, 0.0);
    EXPECT_LE(p.warps_per_sm, 64.0);
  }
  // Finish times alone: fewer instructions and half the bytes per operand.
  const auto full = project_device_replay(g, prog, db.gpu("h200"), true);
  const auto finish = project_device_replay(g, prog, db.gpu("h200"), false);
  EXPECT_LT(finish.instructions_per_node_variant, full.instructions_per_node_variant);
  EXPECT_LT(finish.shared_bytes_per_node_variant, full.shared_bytes_per_node_variant);
}

TEST(DeviceProjection, WithoutLongLivedRegistersThereIsNoGlobalTraffic) {
  const auto& db = lumos::cost::embedded_db();
  const auto g = lumos::graph::synthetic_graph(200, 7);
  const auto prog = lumos::replay::compile_program(g);
  ASSERT_EQ(prog.short_regs, prog.max_live);  // 200 nodes: every value is read soon
  const auto p = project_device_replay(g, prog, db.gpu("h200"));
  EXPECT_EQ(p.shared_registers, prog.max_live);
  EXPECT_EQ(p.state_bytes_per_node_variant, 0.0);
  EXPECT_TRUE(std::isinf(p.state_bound));
  EXPECT_NE(p.limit, "state");
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
  EXPECT_GT(b.shared_bytes_per_node_variant, a.shared_bytes_per_node_variant);
  EXPECT_LT(b.projected, a.projected);
}

TEST(DeviceProjection, LongLivedRegistersAreReadFromTheL2OrHbm) {
  const auto& db = lumos::cost::embedded_db();
  const auto g = lumos::graph::synthetic_graph(5000, 3);
  auto prog = lumos::replay::compile_program(g);
  // No register in shared memory: every operand is global state.
  prog.short_regs = 0;
  prog.max_live = 2;  // 2 x 16 B for each of a full H200's lanes: in the 50 MiB L2
  const auto small = project_device_replay(g, prog, db.gpu("h200"));
  EXPECT_EQ(small.shared_registers, 0u);
  EXPECT_EQ(small.state_level, "L2");
  // Every operand not forwarded from the previous instruction and every stored finish.
  const auto fw = lumos::replay::forwarding(prog, g);
  double accesses = 0;
  for (const uint8_t f : fw.forward) accesses += f ? 0 : 1;
  for (const uint8_t n : fw.no_store) accesses += n ? 0 : 1;
  EXPECT_GT(accesses, 0.0);
  EXPECT_NEAR(small.state_bytes_per_node_variant, 16.0 * accesses / g.num_nodes(), 1e-9);
  prog.max_live = 1000;  // gigabytes resident
  const auto large = project_device_replay(g, prog, db.gpu("h200"));
  EXPECT_EQ(large.state_level, "HBM");
  EXPECT_DOUBLE_EQ(large.state_bytes_per_s, 4.8e12);
  EXPECT_LT(large.projected, small.projected);
}

TEST(DeviceProjection, SharedMemoryLimitsTheWarpsAnSmHoldsAndTheRegistersKeptThere) {
  const auto& db = lumos::cost::embedded_db();
  const auto g = lumos::graph::synthetic_graph(5000, 3);
  auto prog = lumos::replay::compile_program(g);
  prog.short_regs = prog.max_live = 1;  // 4 KiB per block of 64 threads
  const auto few = project_device_replay(g, prog, db.gpu("h200"));
  prog.short_regs = prog.max_live = 40;
  const auto many = project_device_replay(g, prog, db.gpu("h200"));
  // One register: the register file, not shared memory, limits it (96 registers per thread of
  // the path kernel: 10 blocks of 64 threads, 20 warps).
  EXPECT_EQ(few.warps_per_sm, 20.0);
  EXPECT_LT(many.warps_per_sm, few.warps_per_sm);
  // A block keeps at most 48 KiB: 12 registers of 16 B x 4 lanes x 64 threads; four such blocks
  // (8 warps) fit an SM's 228 KB. The other 28 registers are global state.
  EXPECT_EQ(many.shared_registers, 12u);
  EXPECT_EQ(many.warps_per_sm, 8.0);
  EXPECT_GT(many.state_bytes_per_node_variant, 0.0);
}

}  // namespace
