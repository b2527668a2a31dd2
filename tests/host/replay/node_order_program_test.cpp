// The node-order program (one register per node, no allocation) replays a batch to the same bits
// as the compiled program, on random DAGs with and without model slots and on generated
// iterations: a layout search replays its one-variant batches through it.
#include <gtest/gtest.h>

#include <random>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "graph/synthetic_graph.hpp"
#include "replay/batch_replay.hpp"
#include "replay/replay_program.hpp"
#include "support/random_variants.hpp"

using namespace lumos::replay;
using lumos::testing::random_variants;

namespace {

void expect_same_bits(const BatchResult& a, const BatchResult& b, const std::string& what) {
  ASSERT_EQ(a.variants, b.variants) << what;
  for (uint32_t v = 0; v < a.variants; ++v) {
    ASSERT_EQ(a.makespan_us[v], b.makespan_us[v]) << what << " variant " << v;
    ASSERT_EQ(a.cp_compute_us[v], b.cp_compute_us[v]) << what;
    for (size_t k = 0; k < a.step_us.size(); ++k)
      ASSERT_EQ(a.step_us[k][v], b.step_us[k][v]) << what << " step " << k;
  }
}

}  // namespace

TEST(NodeOrderProgram, ReplaysToTheCompiledProgramsBitsOnRandomDags) {
  std::mt19937 rng(2718);
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const uint32_t nodes = 2 + static_cast<uint32_t>(rng() % 500);
    const auto g =
        lumos::graph::synthetic_graph(nodes, seed, 1 + static_cast<uint32_t>(rng() % 8), 0.3);
    VariantBatch b = random_variants(1 + static_cast<uint32_t>(rng() % 3), rng);
    if (seed % 2 == 0) lumos::testing::add_random_slots(b, g, rng);
    const ReplayProgram compiled = compile_program(g), in_order = node_order_program(g);
    EXPECT_EQ(in_order.max_live, g.num_nodes());
    for (bool path : {false, true})
      expect_same_bits(batch_replay_cpu(g, b, 0, 1, nullptr, &in_order, path),
                       batch_replay_cpu(g, b, 0, 1, nullptr, &compiled, path),
                       "seed " + std::to_string(seed));
    if (HasFatalFailure()) return;
  }
}

TEST(NodeOrderProgram, ReplaysAGeneratedIterationToTheCompiledProgramsBits) {
  std::mt19937 rng(5);
  lumos::estimate::EstimateRequest r;
  r.model = lumos::model::preset("llama3-8b");
  r.model.layers = 8;
  r.cfg.tp = 2, r.cfg.pp = 4, r.cfg.dp = 2, r.cfg.interleave = 2, r.cfg.gbs = 32;
  const auto g = lumos::estimate::run_estimate(r, lumos::cost::embedded_db()).step.graph;
  const VariantBatch b = random_variants(1, rng);
  const ReplayProgram in_order = node_order_program(g);
  const BatchResult a = batch_replay_cpu(g, b, 0, 1, nullptr, &in_order, false);
  expect_same_bits(a, batch_replay_cpu(g, b, 0, 1, nullptr, nullptr, false), "llama3-8b");
  // And the reference replay, which shares none of the program's code.
  EXPECT_NEAR(a.makespan_us[0], batch_replay_reference(g, b).makespan_us[0],
              1e-9 * a.makespan_us[0]);
}
