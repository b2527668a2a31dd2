// A batch that does not ask for busy time (VariantBatch::busy false, as a sweep's) replays to the
// same finish times, to the bit, and leaves the busy totals at zero; one that asks gets them.
#include <gtest/gtest.h>

#include <random>

#include "graph/synthetic_graph.hpp"
#include "replay/batch_replay.hpp"
#include "support/random_variants.hpp"

namespace {

using lumos::replay::BatchResult;

TEST(BatchBusyChoice, WithoutBusyTimeTheFinishTimesAreTheSameAndTheTotalsZero) {
  const lumos::graph::Graph g = lumos::graph::synthetic_graph(2000, 7);
  std::mt19937 rng(3);
  lumos::replay::VariantBatch b = lumos::testing::random_variants(6, rng);
  lumos::testing::add_random_slots(b, g, rng);
  const BatchResult with = lumos::replay::batch_replay_cpu(g, b, 0, 1, nullptr, nullptr, false);
  b.busy = false;
  const BatchResult without = lumos::replay::batch_replay_cpu(g, b, 0, 1, nullptr, nullptr, false);
  ASSERT_EQ(with.makespan_us.size(), 6u);
  EXPECT_EQ(without.makespan_us, with.makespan_us);
  EXPECT_EQ(without.step_us, with.step_us);
  double with_busy = 0;
  for (const auto& cls : with.busy_us)
    for (double x : cls) with_busy += x;
  EXPECT_GT(with_busy, 0) << "a batch that asks gets its busy time";
  for (const auto& cls : without.busy_us)
    for (double x : cls) EXPECT_EQ(x, 0);
  ASSERT_EQ(without.resource_busy_us.size(), with.resource_busy_us.size());
  for (const auto& res : without.resource_busy_us)
    for (double x : res) EXPECT_EQ(x, 0);
}

}  // namespace
