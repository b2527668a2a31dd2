// The folded slots of a sweep's batch equal each configuration's own (model_slot_durations) to
// the bit at every batch width: the lane loops take lanes 8, 4 and 1 at a time and matrix rows
// 5 (AVX-512) or 3 at a time, the last block overlapping the one before, and a fold graph is
// replayed from several inputs at once when lanes are few; with and without kept period powers.
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

void expect_width(size_t width, int interleave, bool keep_powers) {
  const std::string what = std::to_string(width) + " configurations, interleave " +
                           std::to_string(interleave) + (keep_powers ? ", kept powers" : "");
  const auto& db = lumos::cost::embedded_db();
  lumos::model::ModelSpec m = lumos::model::preset("gpt3-15b");
  m.layers = 16;
  lumos::model::ParallelConfig cfg;
  cfg.tp = 2, cfg.pp = 4, cfg.dp = 2, cfg.interleave = interleave, cfg.mbs = 1, cfg.gbs = 512;
  const lumos::model::Layout layout = lumos::model::check_layout(m, cfg);
  ASSERT_TRUE(lumos::model::folds_microbatches(cfg, layout.microbatches)) << what;
  const char* gpus[] = {"h100", "a100", "b200", "h200"};
  std::vector<lumos::cost::Topology> topos;
  topos.reserve(width);
  std::vector<StepCosts> priced;
  priced.reserve(width);
  std::vector<ClassSpeeds> speeds;
  for (size_t v = 0; v < width; ++v) {
    const auto& gpu = db.gpu(gpus[v % 4]);
    topos.push_back(db.default_topology_for(gpu));
    topos.back().nic_gbps = 12.5 * static_cast<double>(1 + v / 4 % 4);
    priced.push_back(lumos::model::price_step(m, cfg, layout, db, gpu, topos.back()));
    // Speeds no two configurations share, so that every lane has a matrix of its own.
    speeds.push_back({1, static_cast<float>(1 + 0.125 * static_cast<double>(v)), 1,
                      static_cast<float>(0.75 + 0.01 * static_cast<double>(v)), 1});
  }
  const lumos::model::StepGraph sg = lumos::model::build_step_graph(
      m, cfg, layout, priced.front(), lumos::model::kMaxStepGraphNodes, true);
  ASSERT_FALSE(sg.microbatch_folds.empty()) << what;
  std::vector<const StepCosts*> costs;
  for (const StepCosts& p : priced) costs.push_back(&p);
  lumos::sweep::FoldPowers powers;
  const lumos::sweep::SlotBatch sb =
      lumos::sweep::slot_batch(sg, costs, speeds, keep_powers ? &powers : nullptr);
  expect_slots_each_alone(sg, costs, speeds, sb, what);
}

}  // namespace

TEST(BatchFoldWidths, FoldedSlotsEqualEachConfigurationsOwnAtEveryWidth) {
  for (const size_t width : {1, 2, 3, 5, 8, 11, 16, 19, 33})
    for (const int interleave : {1, 2})
      for (const bool keep : {false, true}) {
        expect_width(width, interleave, keep);
        if (HasFatalFailure()) return;
      }
}
