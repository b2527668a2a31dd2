// Replay programs: the order is topological, no register is overwritten while a reader still
// needs its value, and the state stays small (max_live printed for every shared trace and for
// generated GPT-3 175B and Llama 3 405B iterations).
#include "replay/replay_program.hpp"
#include "replay/packed_program.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "graph/graph_builder.hpp"
#include "graph/synthetic_graph.hpp"
#include "support/test_util.hpp"
#include "trace/kineto_loader.hpp"

using lumos::replay::compile_program;
using lumos::replay::ReplayProgram;

namespace {

// Runs the program over a register file of node ids: each operand must hold its predecessor.
void expect_valid(const lumos::graph::Graph& g, const ReplayProgram& p, const std::string& what) {
  ASSERT_EQ(p.order.size(), g.num_nodes()) << what;
  std::vector<bool> done(g.num_nodes(), false);
  std::vector<int64_t> reg(p.max_live, -1);
  for (uint32_t v : p.order) {
    ASSERT_FALSE(done[v]) << what << ": node " << v << " twice";
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      ASSERT_TRUE(done[g.pred_index[e]]) << what << ": node " << v << " before a predecessor";
      ASSERT_LT(p.op_reg[e], p.max_live) << what;
      ASSERT_EQ(reg[p.op_reg[e]], static_cast<int64_t>(g.pred_index[e]))
          << what << ": node " << v << " reads a register already reused";
    }
    ASSERT_LT(p.dst[v], p.max_live) << what;
    reg[p.dst[v]] = v;
    done[v] = true;
  }
}

lumos::graph::Graph generated(const char* model) {
  lumos::estimate::EstimateRequest r;
  r.model = lumos::model::preset(model);
  r.cfg.tp = 8, r.cfg.pp = 8, r.cfg.dp = 16, r.cfg.gbs = 1024;
  r.cfg.sequence_parallel = r.cfg.distributed_optimizer = true;
  r.cfg.split_counts_embedding = r.model.layers % r.cfg.pp != 0;
  return lumos::estimate::run_estimate(r, lumos::cost::embedded_db()).step.graph;
}

}  // namespace

TEST(ReplayProgram, RegistersHoldEveryValueUntilItsLastReaderOnRandomDags) {
  std::mt19937 rng(5);
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    const auto g = lumos::graph::synthetic_graph(2 + static_cast<uint32_t>(rng() % 400), seed,
                                                 1 + static_cast<uint32_t>(rng() % 8), 0.3);
    expect_valid(g, compile_program(g), "seed " + std::to_string(seed));
    if (HasFatalFailure()) return;
  }
}

// The working set by its definition: a list of registers, most recently used first.
uint32_t lru_hot_registers(const lumos::graph::Graph& g, const ReplayProgram& p) {
  std::vector<uint32_t> mru;
  std::vector<uint64_t> by_distance(p.max_live + 1, 0);
  uint64_t reads = 0;
  auto to_front = [&](uint32_t reg) {
    auto it = std::find(mru.begin(), mru.end(), reg);
    if (it != mru.end()) mru.erase(it);
    mru.insert(mru.begin(), reg);
  };
  for (uint32_t v : p.order) {
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const auto it = std::find(mru.begin(), mru.end(), p.op_reg[e]);
      ++by_distance[it - mru.begin()], ++reads;
      to_front(p.op_reg[e]);
    }
    to_front(p.dst[v]);
  }
  uint64_t sum = 0;
  for (uint32_t d = 0; d <= p.max_live; ++d)
    if ((sum += by_distance[d]) >= reads - reads / 100) return std::max(1u, d + 1);
  return p.max_live;
}

TEST(ReplayProgram, HotRegistersAreTheLruWorkingSetOfNinetyNinePercentOfReads) {
  std::mt19937 rng(11);
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const auto g = lumos::graph::synthetic_graph(2 + static_cast<uint32_t>(rng() % 600), seed,
                                                 1 + static_cast<uint32_t>(rng() % 12), 0.3);
    const ReplayProgram p = compile_program(g);
    const uint32_t hot = lumos::replay::hot_registers(p, g);
    ASSERT_EQ(hot, lru_hot_registers(g, p)) << "seed " << seed;
    ASSERT_GE(hot, 1u);
    ASSERT_LE(hot, p.max_live);
  }
}

TEST(ReplayProgram, StateIsAFewPercentOfTheGraphOnSharedTracesAndGeneratedIterations) {
  std::printf("%-90s %9s %9s %6s %5s %8s\n", "graph", "nodes", "max_live", "short", "hot",
              "state%");
  auto check = [](const lumos::graph::Graph& g, const std::string& what, double max_fraction) {
    const ReplayProgram p = compile_program(g);
    expect_valid(g, p, what);
    // State: 16 bytes per register and variant, against 8 per node and variant.
    const double fraction = 16.0 * p.max_live / (8.0 * g.num_nodes());
    std::printf("%-90s %9u %9u %6u %5u %7.3f%%\n", what.c_str(), g.num_nodes(), p.max_live,
                p.short_regs, lumos::replay::hot_registers(p, g), 100 * fraction);
    EXPECT_LE(fraction, max_fraction) << what;
    EXPECT_LE(p.short_regs, p.max_live) << what;
  };
  check(generated("gpt3-175b"), "generated gpt3-175b, TP 8 x PP 8 x DP 16, 64 micro-batches", 0.05);
  check(generated("llama3-405b"), "generated llama3-405b, TP 8 x PP 8 x DP 16, 64 micro-batches",
        0.05);
  if (!std::filesystem::exists(lumos::testing::trace_dir())) {
    std::printf("shared traces not found at %s: their max_live is not printed\n",
                lumos::testing::trace_dir().c_str());
    return;
  }
  for (const auto& path : lumos::testing::shared_traces()) {
    // Small traces have few nodes, so only their validity is held, not a fraction.
    check(lumos::graph::build_graph(lumos::trace::load_trace(path)).graph, path, 2.0);
  }
}

// An operand is forwarded exactly when the previous instruction computed it; a finish is stored
// unless every reader is the next instruction.
TEST(ReplayProgram, ForwardedOperandsComeFromThePreviousInstructionAndOnlyTheyAreUnstored) {
  std::mt19937 rng(23);
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const auto g = lumos::graph::synthetic_graph(2 + static_cast<uint32_t>(rng() % 500), seed,
                                                 1 + static_cast<uint32_t>(rng() % 8), 0.3);
    const ReplayProgram p = compile_program(g);
    const lumos::replay::Forwarding f = lumos::replay::forwarding(p, g);
    std::vector<uint32_t> at(g.num_nodes());
    for (uint32_t i = 0; i < p.nodes; ++i) at[p.order[i]] = i;
    std::vector<bool> read_later(g.num_nodes(), false);
    for (uint32_t v = 0; v < g.num_nodes(); ++v)
      for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
        const uint32_t u = g.pred_index[e];
        ASSERT_EQ(f.forward[e] != 0, at[u] + 1 == at[v]) << "seed " << seed;
        if (at[u] + 1 != at[v]) read_later[u] = true;
      }
    for (uint32_t u = 0; u < g.num_nodes(); ++u)
      ASSERT_EQ(f.no_store[u] != 0, !read_later[u]) << "seed " << seed << " node " << u;
  }
}
