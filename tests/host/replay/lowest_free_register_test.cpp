// Replay programs give each value the lowest register of its pool that holds no value still to be
// read (replay_program.hpp): checked against a register file simulated here, on random DAGs and
// on a generated pipeline iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "graph/synthetic_graph.hpp"
#include "replay/replay_program.hpp"

using lumos::replay::compile_program;
using lumos::replay::ReplayProgram;

namespace {

// Walks the program: a register is busy from its value's instruction to its last reader (a value
// nobody reads frees its register at once). Each destination must be the lowest register of its
// pool ([0, short_regs) or the rest) not busy when its instruction runs.
void expect_lowest_free(const lumos::graph::Graph& g, const ReplayProgram& p,
                        const std::string& what) {
  const uint32_t n = g.num_nodes();
  std::vector<uint32_t> at(n), last_read(n, UINT32_MAX);
  for (uint32_t i = 0; i < n; ++i) at[p.order[i]] = i;
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      uint32_t& l = last_read[g.pred_index[e]];
      l = l == UINT32_MAX ? at[v] : std::max(l, at[v]);
    }
  std::set<uint32_t> busy[2];  // pool-relative register numbers
  std::vector<std::vector<uint32_t>> frees(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t v = p.order[i];
    const int pool = p.dst[v] >= p.short_regs ? 1 : 0;
    const uint32_t reg = p.dst[v] - (pool ? p.short_regs : 0);
    uint32_t lowest = 0;
    while (busy[pool].count(lowest)) ++lowest;
    ASSERT_EQ(reg, lowest) << what << ": instruction " << i << " (node " << v << ")";
    if (last_read[v] != UINT32_MAX) {  // else freed at once
      busy[pool].insert(reg);
      frees[last_read[v]].push_back(v);
    }
    for (const uint32_t u : frees[i]) {
      const int upool = p.dst[u] >= p.short_regs ? 1 : 0;
      busy[upool].erase(p.dst[u] - (upool ? p.short_regs : 0));
    }
  }
}

}  // namespace

TEST(LowestFreeRegister, EachValueTakesTheLowestRegisterOfItsPoolNotHoldingALiveValue) {
  std::mt19937 rng(11);
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const auto g = lumos::graph::synthetic_graph(2 + static_cast<uint32_t>(rng() % 3000), seed,
                                                 1 + static_cast<uint32_t>(rng() % 8), 0.3);
    expect_lowest_free(g, compile_program(g), "seed " + std::to_string(seed));
    if (HasFatalFailure()) return;
  }
}

TEST(LowestFreeRegister, HoldsOnAGeneratedPipelineIteration) {
  lumos::estimate::EstimateRequest r;
  r.model = lumos::model::preset("gpt3-175b");
  r.cfg.tp = 8, r.cfg.pp = 8, r.cfg.dp = 16, r.cfg.gbs = 1024;
  r.cfg.sequence_parallel = r.cfg.distributed_optimizer = true;
  const auto g = lumos::estimate::run_estimate(r, lumos::cost::embedded_db()).step.graph;
  const ReplayProgram p = compile_program(g);
  EXPECT_GT(p.max_live, p.short_regs) << "both pools in use";
  expect_lowest_free(g, p, "gpt3-175b");
}
