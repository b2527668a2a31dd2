// With cross-validation's left-out errors in kernels_db, an estimate's range is the band of the
// 90th percentile of those errors, over the runs of its GPU and stack or, when they are too few,
// its GPU's or all runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "estimate/uncertainty.hpp"

using lumos::cost::CalibrationResidual;
using lumos::cost::KernelsDb;
using lumos::estimate::step_range;

namespace {

CalibrationResidual left_out(const std::string& gpu, const std::string& stack,
                             const std::string& source, double error_pct) {
  CalibrationResidual r;
  r.label = source + " " + std::to_string(error_pct);
  r.gpu = gpu, r.stack = stack, r.source = source;
  r.gpus = 8, r.params = 1e9;
  r.error_pct = 0;  // the in-sample error is not the band's
  r.has_left_out = true;
  r.left_out_error_pct = error_pct;
  return r;
}

}  // namespace

TEST(LeftOutBand, IsTheNinetiethPercentileOfTheGpuAndStacksLeftOutErrors) {
  KernelsDb db = lumos::cost::embedded_db();
  db.residuals.clear();
  // Ten h100/nemo-2025 runs with |errors| 1..10%: the 90th percentile is 9.1%.
  for (int k = 1; k <= 10; ++k)
    db.residuals.push_back(
        left_out("h100", "nemo-2025", "s" + std::to_string(k % 3), k % 2 ? k : -k));
  db.residuals.push_back(left_out("a100", "megatron-2021", "far", 60));  // another GPU: not used
  db.coverage.rows = 11, db.coverage.inside = 9;
  const auto r = step_range(db, "h100", "nemo-2025", 64, 7e10, 100);
  ASSERT_TRUE(r.known) << r.basis;
  EXPECT_NEAR(r.low_us, 100 / 1.091, 1e-9);
  EXPECT_NEAR(r.high_us, 100 / (1 - 0.091), 1e-9);
  EXPECT_EQ(r.runs.size(), 10u);
  EXPECT_EQ(
      r.basis,
      "the 90th percentile (9.1%) of the left-out errors of 10 published runs on h100/nemo-2025; "
      "such ranges held 9 of 11 runs in cross-validation");
  // Leaving source s1 out (4 runs) leaves 6 runs of the stack and of the GPU: too few, so the
  // band takes every GPU's runs, the a100 one included (|60%|: the 90th percentile grows).
  const auto without = step_range(db, "h100", "nemo-2025", 64, 7e10, 100, 5, "s1");
  ASSERT_TRUE(without.known);
  EXPECT_EQ(without.runs.size(), 7u);
  EXPECT_NE(without.basis.find("of 7 published runs on every GPU"), std::string::npos)
      << without.basis;
  EXPECT_GT(without.high_us, r.high_us);
}
