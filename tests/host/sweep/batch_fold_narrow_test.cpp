// The max-plus products built for 16 vector registers (taken where AVX-512 is not; forced here by
// use_narrow_products_for_testing) fold a sweep's batch to the same bits as each configuration's
// own fold (model_slot_durations): 1F1B and interleaved schedules, batches of 3, 8 and 16
// configurations, matrices of every size a pipeline of 8 stages gives. Where AVX-512 is missing
// the narrow products are the default, and this test checks what the widths test does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "host/sweep/slots_each_alone.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"
#include "sweep/batch_fold_products.hpp"
#include "sweep/sweep_batch.hpp"

namespace {

using lumos::model::ClassSpeeds;
using lumos::model::StepCosts;

// Forces the narrow products for one test, whatever it ends with.
struct NarrowProducts {
  NarrowProducts() { lumos::sweep::maxplus::use_narrow_products_for_testing(true); }
  ~NarrowProducts() { lumos::sweep::maxplus::use_narrow_products_for_testing(false); }
};

void expect_narrow_equal_each_alone(size_t width, int interleave) {
  const std::string what =
      std::to_string(width) + " configurations, interleave " + std::to_string(interleave);
  const auto& db = lumos::cost::embedded_db();
  lumos::model::ModelSpec m = lumos::model::preset("gpt3-15b");
  m.layers = 16;
  lumos::model::ParallelConfig cfg;
  cfg.tp = 2, cfg.pp = 8, cfg.dp = 2, cfg.interleave = interleave, cfg.mbs = 1, cfg.gbs = 256;
  const lumos::model::Layout layout = lumos::model::check_layout(m, cfg);
  std::vector<lumos::cost::Topology> topos;  // the costs keep a pointer to their network
  topos.reserve(width);
  std::vector<StepCosts> priced;
  priced.reserve(width);
  std::vector<ClassSpeeds> speeds;
  std::vector<const StepCosts*> costs;
  for (size_t v = 0; v < width; ++v) {
    const auto& gpu = db.gpu(v % 2 ? "a100" : "h100");
    topos.push_back(db.default_topology_for(gpu));
    topos.back().nic_gbps = 25.0 * static_cast<double>(1 + v % 3);
    priced.push_back(lumos::model::price_step(m, cfg, layout, db, gpu, topos.back()));
    speeds.push_back({1, static_cast<float>(1 + 0.0625 * static_cast<double>(v)), 1, 1, 1});
  }
  for (const StepCosts& p : priced) costs.push_back(&p);
  const lumos::model::StepGraph sg = lumos::model::build_step_graph(
      m, cfg, layout, priced.front(), lumos::model::kMaxStepGraphNodes, true);
  ASSERT_FALSE(sg.microbatch_folds.empty()) << what;
  const NarrowProducts narrow;
  const lumos::sweep::SlotBatch sb = lumos::sweep::slot_batch(sg, costs, speeds);
  expect_slots_each_alone(sg, costs, speeds, sb, what);
}

}  // namespace

TEST(BatchFoldNarrow, NarrowProductsFoldEachConfigurationAsItsOwnFold) {
  for (const size_t width : {3, 8, 16})
    for (const int interleave : {1, 2}) {
      expect_narrow_equal_each_alone(width, interleave);
      if (HasFatalFailure()) return;
    }
}
