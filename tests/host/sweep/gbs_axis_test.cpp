// A sweep over global batch sizes and micro-batch sizes: layouts that differ only in their
// micro-batch count share one graph with its steady state folded (graph_reuse.hpp), and every
// row still equals `lumos estimate` of its configuration.
#include <gtest/gtest.h>

#include <cstddef>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "support/sweep_test_util.hpp"
#include "sweep/sweep_run.hpp"
#include "sweep/sweep_spec.hpp"

namespace {

using namespace lumos::sweep;

SweepSpec batch_size_spec() {
  SweepSpec s;
  s.model = lumos::model::preset("gpt3-15b");
  s.model.layers = 8;
  s.total_gpus = {16};
  s.tp = {2};
  s.pp = {4};
  s.interleave = {1, 2};
  s.mbs = {1, 2};
  s.gbs = {64, 128, 256, 512};
  s.gpus = {"h100", "b200"};
  s.nic_gbps = {12.5, 50};
  return s;
}

}  // namespace

TEST(SweepBatchSizes, RowsOfSharedFoldedGraphsEqualEstimates) {
  const SweepSpec spec = batch_size_spec();
  SweepOptions opt;
  opt.backend = lumos::engine::Backend::kCpu;
  const SweepResult r = run_sweep(spec, lumos::cost::embedded_db(), opt);
  ASSERT_EQ(r.rows.size(), 2u * 2 * 4 * 2 * 2);
  // Two interleavings x two micro-batch sizes x four batch sizes are 16 layouts; those whose
  // steady state folds share a graph across batch sizes.
  EXPECT_EQ(r.stats.groups, 16u);
  EXPECT_LT(r.stats.graphs, 12u) << "layouts differing only in micro-batch count share graphs";
  size_t checked = 0;
  for (size_t i = 0; i < r.rows.size(); i += 3) {  // a sample: every third row
    const SweepRow& row = r.rows[i];
    if (!row.feasible) continue;
    const double want = lumos::test::estimate_of(spec, row).step_time_us;
    EXPECT_NEAR(row.step_time_us, want, 1e-9 * want)
        << "gbs " << row.variant.cfg.gbs << " mbs " << row.variant.cfg.mbs << " v "
        << row.variant.cfg.interleave << " " << row.variant.gpu;
    ++checked;
  }
  EXPECT_GT(checked, 15u);
}

TEST(SweepBatchSizes, SharedGraphsGiveTheRowsOfGraphsBuiltOneByOne) {
  // The same sweep one batch size at a time builds every graph itself.
  const SweepSpec spec = batch_size_spec();
  SweepOptions opt;
  opt.backend = lumos::engine::Backend::kCpu;
  const SweepResult all = run_sweep(spec, lumos::cost::embedded_db(), opt);
  for (int64_t gbs : spec.gbs) {
    SweepSpec one = spec;
    one.gbs = {gbs};
    const SweepResult r = run_sweep(one, lumos::cost::embedded_db(), opt);
    size_t k = 0;
    for (const SweepRow& row : all.rows) {
      if (row.variant.cfg.gbs != gbs) continue;
      ASSERT_LT(k, r.rows.size());
      const SweepRow& alone = r.rows[k++];
      EXPECT_EQ(row.feasible, alone.feasible);
      EXPECT_EQ(row.step_time_us, alone.step_time_us) << "gbs " << gbs;
      EXPECT_EQ(row.gpu_energy_kwh, alone.gpu_energy_kwh) << "gbs " << gbs;
    }
    EXPECT_EQ(k, r.rows.size());
  }
}
