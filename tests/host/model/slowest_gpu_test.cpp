// The slowest GPU of a synchronous job (docs/design.md, "Slowest GPU"): matrix kernels at the pace
// of the slowest of the job's GPUs, from the spread of one node's GPUs (gpus.json matmul_spread).
#include <gtest/gtest.h>

#include <cmath>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "model/slowest_gpu.hpp"

using namespace lumos::model;

TEST(SlowestGpu, ExpectedMaximaOfNormalsMatchTheOrderStatisticsTables) {
  // Published order statistics of the standard normal (Harter 1961; 1/sqrt(pi) for two).
  EXPECT_EQ(expected_max_of_normals(1), 0.0);
  EXPECT_NEAR(expected_max_of_normals(2), 1 / std::sqrt(M_PI), 1e-6);
  EXPECT_NEAR(expected_max_of_normals(8), 1.42360, 1e-4);
  EXPECT_NEAR(expected_max_of_normals(100), 2.50759, 1e-4);
  EXPECT_NEAR(expected_max_of_normals(1000), 3.24144, 1e-4);
}

TEST(SlowestGpu, EightGpusRunHalfTheNodeSpreadBelowTheTablesGpu) {
  // A node's spread is its expected range, twice its slowest GPU's expected deficit.
  const auto& db = lumos::cost::embedded_db();
  const auto& h100 = db.gpu("h100");
  ASSERT_GT(h100.matmul_spread, 0);
  EXPECT_NEAR(slowest_gpu_matrix_factor(h100, 8), 1 / (1 - h100.matmul_spread / 2), 1e-9);
}

TEST(SlowestGpu, GrowsWithTheJobAndIsNoneForOneGpuOrAGpuWithoutASpread) {
  const auto& db = lumos::cost::embedded_db();
  const auto& h100 = db.gpu("h100");
  EXPECT_EQ(slowest_gpu_matrix_factor(h100, 1), 1.0);
  double prev = 1;
  for (int64_t n : {2, 8, 64, 512, 4096, 32768}) {
    const double f = slowest_gpu_matrix_factor(h100, n);
    EXPECT_GT(f, prev) << n;
    prev = f;
  }
  EXPECT_LT(prev, 1.1);  // 32,768 GPUs: the slowest some 4 deviations down, not a collapse
  const auto& a100 = db.gpu("a100");
  EXPECT_EQ(a100.matmul_spread, 0.0);  // no published spread
  EXPECT_EQ(slowest_gpu_matrix_factor(a100, 4096), 1.0);
}

namespace {

// Data parallel only, with free communication: more replicas change nothing but the GPU count.
double step_us(const std::string& gpu, int dp) {
  lumos::estimate::EstimateRequest q;
  q.model = preset("llama3-8b");
  q.model.layers = 2;
  q.gpu = gpu;
  q.cfg.tp = 1, q.cfg.pp = 1, q.cfg.dp = dp, q.cfg.mbs = 1, q.cfg.gbs = 2 * dp;
  q.options.free_comm = true;
  return lumos::estimate::run_estimate(q, lumos::cost::embedded_db()).estimate.step_time_us;
}

}  // namespace

TEST(SlowestGpu, ALargerH100JobRunsSlowerPerReplicaAndAnA100JobDoesNot) {
  const double small = step_us("h100", 8), large = step_us("h100", 2048);
  const auto& h100 = lumos::cost::embedded_db().gpu("h100");
  const double ratio = slowest_gpu_matrix_factor(h100, 2048) / slowest_gpu_matrix_factor(h100, 8);
  EXPECT_GT(large / small, 1.01);
  EXPECT_LT(large / small, ratio + 1e-9);  // only the matrix kernels slow down
  EXPECT_NEAR(step_us("a100", 2048), step_us("a100", 8), 1e-6);
}
