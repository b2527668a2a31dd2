// GPU utilization per bin (Lumos Figure 6): exact busy fractions on hand-made intervals and on a
// hand-written trace (bin edges, streams that overlap counted once, kernels spanning bins), and
// traced and replayed timelines that agree under an identity replay.
#include "replay/utilization_bins.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"
#include "graph/load_input.hpp"
#include "replay/reference_replay.hpp"
#include "support/graph_test_util.hpp"
#include "support/test_util.hpp"

using lumos::replay::busy_fractions;
using lumos::replay::utilization_bins;

TEST(UtilizationBins, UnionOfIntervalsPerBin) {
  // Bins of 10: [0,10) [10,20) [20,30) [30,40).
  const auto f = busy_fractions({{2, 8},      // inside bin 0
                                 {5, 15},     // overlaps the first and crosses an edge
                                 {12, 14},    // inside the second, counted once
                                 {20, 30},    // exactly one bin, edge to edge
                                 {35, 1e9}},  // runs past the grid
                                10, 4);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_DOUBLE_EQ(f[0], 0.8);  // [2,10)
  EXPECT_DOUBLE_EQ(f[1], 0.5);  // [10,15)
  EXPECT_DOUBLE_EQ(f[2], 1.0);
  EXPECT_DOUBLE_EQ(f[3], 0.5);  // [35,40)
}

TEST(UtilizationBins, KernelSpanningManyBinsAndEmptyBins) {
  const auto f = busy_fractions({{250, 1000}}, 100, 12);
  const double expect[12] = {0, 0, 0.5, 1, 1, 1, 1, 1, 1, 1, 0, 0};
  for (size_t i = 0; i < 12; ++i) EXPECT_DOUBLE_EQ(f[i], expect[i]) << i;
}

TEST(UtilizationBins, StreamsOfOneGpuCountOnce) {
  lumos::trace::KinetoWriter w;
  w.cpu_op(1, "start", 0, 1);                                              // the trace starts at 0
  w.launch(1, "cudaLaunchKernel", 1, 1, "kernel", "a", 0, 7, 100, 1400);   // [100,1500)
  w.launch(1, "cudaLaunchKernel", 3, 1, "kernel", "b", 0, 8, 1000, 1200);  // [1000,2200)
  w.launch(1, "cudaLaunchKernel", 5, 1, "kernel", "c", 0, 7, 2500, 100);   // [2500,2600)
  w.launch(1, "cudaMemcpyAsync", 7, 1, "gpu_memcpy", "Memcpy HtoD", 0, 9, 2950, 100);
  const auto b = lumos::testing::build(w);
  const auto r = lumos::replay::reference_replay(b.g());
  const auto s = utilization_bins(b.g(), r, 1000);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].traced.size(), 4u);  // the memcpy ends at 3050
  const double expect[4] = {0.9, 1.0, 0.2 + 0.1 + 0.05, 0.05};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(s[0].traced[i], expect[i], 1e-9) << i;
    EXPECT_NEAR(s[0].replayed[i], expect[i], 1e-9) << i;  // nothing delays the replay
  }
}

TEST(UtilizationBins, BadBinIsInputError) {
  lumos::trace::KinetoWriter w;
  w.launch(1, "cudaLaunchKernel", 0, 1, "kernel", "a", 0, 7, 10, 10);
  const auto b = lumos::testing::build(w);
  const auto r = lumos::replay::reference_replay(b.g());
  EXPECT_THROW(utilization_bins(b.g(), r, 0), lumos::InputError);
  EXPECT_THROW(utilization_bins(b.g(), r, 1e-9), lumos::InputError);  // too many bins
}

TEST(UtilizationBins, IdentityReplayMatchesTheTraceOnASharedTrace) {
  LUMOS_REQUIRE_TRACES();
  const auto traces = lumos::testing::shared_traces();
  ASSERT_FALSE(traces.empty());
  const auto in = lumos::graph::load_input(traces.front());
  const auto r = lumos::replay::reference_replay(in.graph);
  for (const auto& s : utilization_bins(in.graph, r, 1000)) {
    ASSERT_FALSE(s.traced.empty());
    double diff = 0, busy = 0;
    for (size_t i = 0; i < s.traced.size(); ++i) {
      EXPECT_GE(s.traced[i], 0);
      EXPECT_LE(s.traced[i], 1);
      diff += std::fabs(s.traced[i] - s.replayed[i]);
      busy += s.traced[i];
    }
    EXPECT_LT(diff / static_cast<double>(s.traced.size()), 0.01) << traces.front();
    EXPECT_GT(busy, 0) << traces.front();
  }
}
