// The folded slots of a sweep's batch, computed for all its configurations at once, are those
// model_slot_durations gives each configuration alone: the same to the bit, for layer folds and
// folded micro-batches, 1F1B and interleaved, with per-class speeds.
#include <gtest/gtest.h>

#include <vector>

#include "cost/kernels_db.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "sweep/sweep_batch.hpp"

namespace {

using lumos::model::ClassSpeeds;
using lumos::model::StepCosts;

struct Case {
  int interleave;
  bool recompute;
};

void expect_batch_equals_one_at_a_time(const Case& c) {
  const auto& db = lumos::cost::embedded_db();
  lumos::model::ModelSpec m = lumos::model::preset("gpt3-15b");
  m.layers = 16;
  lumos::model::ParallelConfig cfg;
  cfg.tp = 2, cfg.pp = 4, cfg.dp = 2, cfg.interleave = c.interleave, cfg.mbs = 1, cfg.gbs = 256;
  if (c.recompute) cfg.recompute = lumos::model::Recompute::kFull;
  const lumos::model::Layout layout = lumos::model::check_layout(m, cfg);
  ASSERT_TRUE(lumos::model::folds_microbatches(cfg, layout.microbatches));
  // Three GPU types on two network rates; StepCosts points at its topology, kept alive here.
  std::vector<lumos::cost::Topology> topos;
  topos.reserve(6);
  std::vector<StepCosts> priced;
  std::vector<ClassSpeeds> speeds;
  for (const char* gpu : {"h100", "a100", "b200"})
    for (double nic : {12.5, 50.0}) {
      topos.push_back(db.default_topology_for(db.gpu(gpu)));
      topos.back().nic_gbps = nic;
      priced.push_back(lumos::model::price_step(m, cfg, layout, db, db.gpu(gpu), topos.back()));
      speeds.push_back({1, static_cast<float>(1 + 0.5 * speeds.size()), 1, 0.75f, 1});
    }
  const lumos::model::StepGraph sg = lumos::model::build_step_graph(
      m, cfg, layout, priced.front(), lumos::model::kMaxStepGraphNodes, true);
  ASSERT_FALSE(sg.microbatch_folds.empty()) << "the steady state is folded";
  ASSERT_FALSE(sg.folds.empty()) << "runs of layers are folded";
  std::vector<const StepCosts*> costs;
  for (const StepCosts& p : priced) costs.push_back(&p);
  const lumos::sweep::SlotBatch sb = lumos::sweep::slot_batch(sg, costs, speeds);
  for (uint32_t v = 0; v < sb.batch.count; ++v) {
    const std::vector<double> want = lumos::model::model_slot_durations(sg, priced[v], speeds[v]);
    ASSERT_EQ(want.size(), sb.batch.slots);
    for (size_t s = 0; s < want.size(); ++s)
      ASSERT_EQ(sb.batch.slot_us[s * sb.batch.count + v], want[s]) << "slot " << s << " of " << v;
    const auto busy = lumos::model::kernel_busy_us(sg, want);
    EXPECT_EQ(sb.busy[v].compute_bound_us, busy.compute_bound_us);
    EXPECT_EQ(sb.busy[v].comm_us, busy.comm_us);
  }
  // The configurations' folded periods differ: each lane has its own matrix.
  const size_t last = (sb.batch.slots - 1) * size_t{sb.batch.count};
  EXPECT_NE(sb.batch.slot_us[last], sb.batch.slot_us[last + sb.batch.count - 1]);
}

}  // namespace

TEST(BatchFold, OneFOneBFoldedSlotsEqualEachConfigurationsOwn) {
  expect_batch_equals_one_at_a_time({1, false});
}

TEST(BatchFold, InterleavedFoldedSlotsEqualEachConfigurationsOwn) {
  expect_batch_equals_one_at_a_time({2, false});
}

TEST(BatchFold, RecomputedFoldedSlotsEqualEachConfigurationsOwn) {
  expect_batch_equals_one_at_a_time({2, true});
}
