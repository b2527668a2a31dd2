// An estimate's range comes from the errors of the nearest published runs of its GPU and stack.
#include "estimate/uncertainty.hpp"

#include <gtest/gtest.h>

#include "cost/kernels_db.hpp"

using lumos::cost::CalibrationResidual;
using lumos::cost::KernelsDb;
using lumos::estimate::step_range;

namespace {

KernelsDb with_residuals(std::vector<CalibrationResidual> runs) {
  KernelsDb db = lumos::cost::embedded_db();
  db.residuals = std::move(runs);
  return db;
}

}  // namespace

TEST(StepRange, ComesFromTheNearestRunsOfTheSameGpuAndStack) {
  const KernelsDb db = with_residuals({
      {"small", "a100", "megatron-2021", 32, 2e9, -10},   // lumos 10% too fast
      {"near", "a100", "megatron-2021", 1024, 1e11, -5},  // 5% too fast
      {"far", "a100", "megatron-2021", 3072, 1e13, +20},  // excluded: not among the 2 nearest
      {"other gpu", "h100", "megatron-2021", 1024, 1e11, +50},
  });
  const auto r = step_range(db, "a100", "megatron-2021", 512, 5e10, 100, 2);
  ASSERT_TRUE(r.known) << r.basis;
  EXPECT_EQ(r.runs, (std::vector<std::string>{"near", "small"}));
  EXPECT_DOUBLE_EQ(r.low_us, 100);  // the estimate itself is in the range
  EXPECT_NEAR(r.high_us, 100 / 0.9, 1e-9);
  EXPECT_EQ(r.basis, "2 published a100/megatron-2021 runs");
}

TEST(StepRange, FallsBackToSimilarStacksThenSaysWhyThereIsNone) {
  const KernelsDb db = with_residuals({
      {"a", "h100", "nemo-2025", 8, 8e9, -9},
      {"b", "h100", "nemo-2025", 64, 7e10, -2},
      {"eager", "h100", "torchtitan", 8, 8e9, -30},
  });
  const auto r = step_range(db, "h100", "megatron-core", 16, 1.5e10, 1000);
  ASSERT_TRUE(r.known);
  EXPECT_EQ(r.runs.size(), 2u);  // torchtitan runs other kernels: not similar
  EXPECT_NEAR(r.high_us, 1000 / 0.91, 1e-9);
  EXPECT_EQ(r.basis, "2 published h100 (similar stacks) runs");
  const auto none = step_range(db, "b200", "megatron-core", 16, 1.5e10, 1000);
  EXPECT_FALSE(none.known);
  EXPECT_NE(none.basis.find("fewer than two published runs on b200"), std::string::npos);
}
