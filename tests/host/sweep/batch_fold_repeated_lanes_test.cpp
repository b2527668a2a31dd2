// Configurations of a batch whose periods are the same to the bit are folded once, in fewer
// lanes, and copied to the others (batch_fold.cpp, period_runs): each configuration's slots
// still equal its own fold to the bit, for batches of 2 to 17 configurations of 2 or 3 distinct
// ones, in any order, with and without kept period powers. From 5 configurations on, the
// distinct ones take fewer matrix lanes than the batch (4 against 8 or more), so those batches
// fold in fewer lanes; batches of 2 and 3 fold every lane.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "host/sweep/slots_each_alone.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "sweep/batch_fold.hpp"
#include "sweep/sweep_batch.hpp"

namespace {

using lumos::model::ClassSpeeds;
using lumos::model::StepCosts;

void expect_repeated_lanes(size_t width, size_t distinct, bool keep_powers) {
  const std::string what = std::to_string(width) + " configurations of " +
                           std::to_string(distinct) + (keep_powers ? ", kept powers" : "");
  const auto& db = lumos::cost::embedded_db();
  lumos::model::ModelSpec m = lumos::model::preset("gpt3-15b");
  m.layers = 16;
  lumos::model::ParallelConfig cfg;
  cfg.tp = 2, cfg.pp = 4, cfg.dp = 2, cfg.interleave = 2, cfg.mbs = 1, cfg.gbs = 512;
  const lumos::model::Layout layout = lumos::model::check_layout(m, cfg);
  const char* gpus[] = {"h100", "a100", "b200"};
  std::vector<lumos::cost::Topology> topos;  // the costs keep a pointer to their network
  topos.reserve(distinct);
  std::vector<StepCosts> priced;
  priced.reserve(distinct);
  for (size_t x = 0; x < distinct; ++x) {
    const auto& gpu = db.gpu(gpus[x]);
    topos.push_back(db.default_topology_for(gpu));
    priced.push_back(lumos::model::price_step(m, cfg, layout, db, gpu, topos.back()));
  }
  // The first `distinct` configurations are the distinct ones, the rest repeat them in another
  // order ((v * 7 / 3) % distinct): repeats not side by side, and every distinct one there.
  std::vector<const StepCosts*> costs;
  std::vector<ClassSpeeds> speeds;
  for (size_t v = 0; v < width; ++v) {
    const size_t x = v < distinct ? v : v * 7 / 3 % distinct;
    costs.push_back(&priced[x]);
    speeds.push_back({1, static_cast<float>(1 + 0.25 * static_cast<double>(x)), 1, 1, 1});
  }
  const lumos::model::StepGraph sg = lumos::model::build_step_graph(
      m, cfg, layout, priced.front(), lumos::model::kMaxStepGraphNodes, true);
  ASSERT_FALSE(sg.microbatch_folds.empty()) << what;
  lumos::sweep::FoldPowers powers;
  const lumos::sweep::SlotBatch sb =
      lumos::sweep::slot_batch(sg, costs, speeds, keep_powers ? &powers : nullptr);
  expect_slots_each_alone(sg, costs, speeds, sb, what);
}

}  // namespace

TEST(BatchFoldRepeatedLanes, RepeatedConfigurationsFoldAsEachAlone) {
  for (const size_t width : {2, 5, 8, 16, 17})
    for (const size_t distinct : {2, 3})
      for (const bool keep : {false, true}) {
        if (distinct > width) continue;
        expect_repeated_lanes(width, distinct, keep);
        if (HasFatalFailure()) return;
      }
}
