// A sweep over global batch sizes raises one period's matrix to several powers, keeping the
// products each power took on its way for the next (batch_fold.hpp, FoldPowers): every power so
// taken is the one model_slot_durations takes for the configuration alone, to the bit, with 16
// lanes (the widest blocks of the max-plus product) and with 5 (the narrowest).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "cost/kernels_db.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "sweep/sweep_batch.hpp"

namespace {

using lumos::model::ClassSpeeds;
using lumos::model::StepCosts;

// Whether powers a and b have a common first product: their lowest bits agree up to a set bit
// above the lowest of either.
bool share_a_product(int64_t a, int64_t b) {
  const auto x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
  for (int bit = std::countr_zero(x) + 1; bit < 63; ++bit) {
    const uint64_t low = (uint64_t{2} << bit) - 1;
    if ((x & low) != (y & low)) return false;
    if ((x >> bit & 1) && (y >> bit & 1)) return true;
  }
  return false;
}

void expect_kept_powers_equal_each_alone(size_t lanes) {
  const auto& db = lumos::cost::embedded_db();
  lumos::model::ModelSpec m = lumos::model::preset("gpt3-15b");
  m.layers = 16;
  lumos::model::ParallelConfig cfg;
  cfg.tp = 2, cfg.pp = 4, cfg.dp = 2, cfg.interleave = 1, cfg.mbs = 1;
  std::vector<lumos::cost::Topology> topos;
  std::vector<const char*> gpus;
  topos.reserve(8);
  for (const char* gpu : {"h100", "a100", "b200", "h200"})
    for (double nic : {12.5, 50.0}) {
      gpus.push_back(gpu);
      topos.push_back(db.default_topology_for(db.gpu(gpu)));
      topos.back().nic_gbps = nic;
    }
  lumos::sweep::FoldPowers powers;
  std::vector<int64_t> periods;
  for (const int64_t gbs : {256, 384, 512, 768, 1024, 1536, 2048}) {
    cfg.gbs = gbs;
    const lumos::model::Layout layout = lumos::model::check_layout(m, cfg);
    std::vector<StepCosts> priced;
    priced.reserve(topos.size());
    std::vector<const StepCosts*> costs;
    std::vector<ClassSpeeds> speeds;
    for (size_t v = 0; v < lanes; ++v) {
      if (v < topos.size())
        priced.push_back(lumos::model::price_step(m, cfg, layout, db, db.gpu(gpus[v]), topos[v]));
      costs.push_back(&priced[v % topos.size()]);
      speeds.push_back({1, static_cast<float>(1 + 0.25 * static_cast<double>(v)), 1, 1, 1});
    }
    const lumos::model::StepGraph sg = lumos::model::build_step_graph(
        m, cfg, layout, priced.front(), lumos::model::kMaxStepGraphNodes, true);
    ASSERT_EQ(sg.microbatch_folds.size(), 1u) << "gbs " << gbs;
    periods.push_back(sg.microbatch_folds.front().periods);
    const lumos::sweep::SlotBatch sb = lumos::sweep::slot_batch(sg, costs, speeds, &powers);
    for (uint32_t v = 0; v < sb.batch.count; ++v) {
      const std::vector<double> want = lumos::model::model_slot_durations(sg, *costs[v], speeds[v]);
      ASSERT_EQ(want.size(), sb.batch.slots);
      for (size_t s = 0; s < want.size(); ++s)
        ASSERT_EQ(sb.batch.slot_us[s * sb.batch.count + v], want[s])
            << "gbs " << gbs << ", slot " << s << " of lane " << v;
    }
  }
  // The batch sizes exercise the kept products: some later power starts from an earlier one's.
  bool shared = false;
  for (size_t a = 0; a < periods.size(); ++a)
    for (size_t b = a + 1; b < periods.size(); ++b)
      shared = shared || share_a_product(periods[a], periods[b]);
  EXPECT_TRUE(shared);
}

}  // namespace

TEST(KeptPowers, PowersFromKeptProductsEqualEachConfigurationsOwnAt16Lanes) {
  expect_kept_powers_equal_each_alone(16);
}

TEST(KeptPowers, PowersFromKeptProductsEqualEachConfigurationsOwnAt5Lanes) {
  expect_kept_powers_equal_each_alone(5);
}
