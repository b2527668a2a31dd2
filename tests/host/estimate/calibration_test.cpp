// The calibration check: lumos's model TFLOP/s per GPU for published DGX-H100 layouts
// (Megatron-Bridge, calibration.md §1.2; NeMo for GPT-3 175B) stays within 15%.
#include <gtest/gtest.h>

#include <cmath>

#include "cost/kernels_db.hpp"
#include "estimate/published_runs.hpp"

using namespace lumos::model;
using namespace lumos::estimate;

TEST(Calibration, ModelTflopsPerGpuWithinFifteenPercentOfPublishedDgxH100Runs) {
  ASSERT_GE(published_runs().size(), 5u);
  for (const auto& p : published_runs()) {
    const auto e = run_estimate(p.request, lumos::cost::embedded_db()).estimate;
    const double err = (e.model_tflops_per_gpu - p.model_tflops_per_gpu) / p.model_tflops_per_gpu;
    EXPECT_LE(std::fabs(err), 0.15) << p.label << ": lumos " << e.model_tflops_per_gpu
                                    << " vs published " << p.model_tflops_per_gpu;
    EXPECT_GT(e.mfu, 0.2) << p.label;
    EXPECT_LT(e.mfu, 0.6) << p.label;
  }
}
