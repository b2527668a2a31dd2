// Pipeline schedules: Megatron's 1F1B order (lumos.md Figure 4), and the bubble of the generated
// iteration with free communication and uniform kernels: (p-1)/(m+p-1) for 1F1B and
// (p-1)/(v m+p-1) interleaved.
#include <gtest/gtest.h>

#include <string>

#include "cost/kernels_db.hpp"
#include "estimate/estimate.hpp"
#include "model/pipeline_schedule.hpp"

using namespace lumos::model;
using namespace lumos::estimate;

namespace {

std::string order(int stage, int pp, int v, int64_t m) {
  std::string s;
  for (const auto& t : stage_schedule(stage, pp, v, m)) {
    if (!s.empty()) s += ' ';
    s += (t.forward ? "F" : "B") + std::to_string(t.microbatch + 1);
    if (v > 1) s += "c" + std::to_string(t.chunk);
  }
  return s;
}

}  // namespace

TEST(PipelineSchedule, OneFOneBMatchesLumosFigureFour) {
  EXPECT_EQ(order(0, 2, 1, 4), "F1 F2 B1 F3 B2 F4 B3 B4");
  EXPECT_EQ(order(0, 4, 1, 8), "F1 F2 F3 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 B6 B7 B8");
  EXPECT_EQ(order(3, 4, 1, 2), "F1 B1 F2 B2");  // the last stage alternates from the start
  EXPECT_EQ(order(0, 4, 1, 2), "F1 F2 B1 B2");  // fewer micro-batches than stages
}

TEST(PipelineSchedule, InterleavedWalksChunksInGroupsOfPMicroBatches) {
  // p = 2, v = 2, m = 4: stage 0 warms up with (p-1)*2 + (v-1)*p = 4 forwards, stage 1 with 2.
  EXPECT_EQ(order(0, 2, 2, 4),
            "F1c0 F2c0 F1c1 F2c1 F3c0 B1c1 F4c0 B2c1 F3c1 B1c0 F4c1 B2c0 B3c1 B4c1 B3c0 B4c0");
  EXPECT_EQ(order(1, 2, 2, 4),
            "F1c0 F2c0 F1c1 B1c1 F2c1 B2c1 F3c0 B1c0 F4c0 B2c0 F3c1 B3c1 F4c1 B4c1 B3c0 B4c0");
  // m = p: Megatron runs every forward first.
  EXPECT_EQ(order(1, 2, 2, 2), "F1c0 F2c0 F1c1 F2c1 B1c1 B2c1 B1c0 B2c0");
  // Activations held at the peak, in stage units: Megatron's p + (p - 1) / v on the first stage,
  // ((v - 1) p + 1) / v on the last.
  EXPECT_DOUBLE_EQ(inflight_microbatches(0, 8, 5, 16), 8 + 7.0 / 5);
  EXPECT_DOUBLE_EQ(inflight_microbatches(7, 8, 5, 16), (4 * 8 + 1) / 5.0);
  EXPECT_DOUBLE_EQ(inflight_microbatches(3, 4, 1, 16), 1);
  EXPECT_DOUBLE_EQ(inflight_microbatches(0, 4, 1, 2), 2);
  for (int s = 0; s < 4; ++s) {
    const auto t = stage_schedule(s, 4, 3, 8);
    ASSERT_EQ(t.size(), 2u * 8 * 3);
    int fwd = 0;
    for (const auto& x : t) fwd += x.forward;
    EXPECT_EQ(fwd, 24);
  }
}

struct BubbleCase {
  int pp, v;
  int64_t m;
};

class IdealBubble : public ::testing::TestWithParam<BubbleCase> {};

TEST_P(IdealBubble, EqualsTheClosedFormWithFreeCommunicationAndUniformKernels) {
  const BubbleCase k = GetParam();
  EstimateRequest r;
  r.model = preset("gpt3-15b");
  r.model.layers = 2 * k.pp * k.v;
  r.cfg.tp = 2, r.cfg.pp = k.pp, r.cfg.dp = 2, r.cfg.mbs = 1, r.cfg.gbs = 2 * k.m;
  r.cfg.interleave = k.v;
  r.options.free_comm = true;
  r.options.uniform_kernel_us = 10;
  const Estimate e = run_estimate(r, lumos::cost::embedded_db()).estimate;
  const double expected =
      static_cast<double>(k.pp - 1) / (static_cast<double>(k.v * k.m) + k.pp - 1);
  for (const auto& s : e.stages)
    EXPECT_NEAR(s.breakdown.bubble_us / e.step_time_us, expected, 1e-9) << "stage " << s.stage;
  EXPECT_NEAR(e.breakdown.bubble_us / e.step_time_us, expected, 1e-9);
  EXPECT_EQ(e.breakdown.exposed_comm_us, 0);
}

INSTANTIATE_TEST_SUITE_P(Schedules, IdealBubble,
                         ::testing::Values(BubbleCase{2, 1, 4}, BubbleCase{4, 1, 8},
                                           BubbleCase{4, 1, 3}, BubbleCase{8, 1, 16},
                                           BubbleCase{2, 2, 4}, BubbleCase{4, 2, 8},
                                           BubbleCase{4, 3, 4}),
                         [](const auto& info) {
                           return "p" + std::to_string(info.param.pp) + "_v" +
                                  std::to_string(info.param.v) + "_m" +
                                  std::to_string(info.param.m);
                         });
