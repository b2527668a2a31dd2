// A multi-rank replay's per-rank breakdown and idle split, on the 8-rank DLRM job.
#include <gtest/gtest.h>

#include "estimate/trace_replay.hpp"
#include "support/test_util.hpp"

namespace {

TEST(JobRankBreakdown, EveryRankHasAWindowThatItsPartsFillOnTheDlrmJob) {
  LUMOS_REQUIRE_TRACES();
  const auto j =
      lumos::estimate::replay_job(lumos::testing::trace_dir() + "/param/dlrm_kineto", {});
  ASSERT_EQ(j.ranks.size(), 8u);
  double waited_most = 0;
  int32_t waited_most_rank = -1;
  for (size_t i = 0; i < j.ranks.size(); ++i) {
    const auto& w = j.ranks[i];
    EXPECT_EQ(w.rank, static_cast<int32_t>(i));
    // The rank's window is its step's replayed time, which reproduces the measured one.
    EXPECT_NEAR(w.breakdown.window_us, j.waits.measured_us[i], 1e-6 * j.waits.measured_us[i]);
    const auto& b = w.breakdown;
    EXPECT_NEAR(b.exposed_compute_us + b.overlapped_us + b.exposed_comm_us + b.other_us,
                b.window_us, 1e-6 * b.window_us);
    EXPECT_NEAR(w.idle.idle_us, b.other_us, 1e-6 * b.window_us);
    EXPECT_NEAR(w.idle.host_us + w.idle.sync_us + w.idle.dependency_us + w.idle.truly_idle_us,
                w.idle.idle_us, 1e-6 * b.window_us);
    if (w.idle.dependency_us > waited_most)
      waited_most = w.idle.dependency_us, waited_most_rank = w.rank;
  }
  // The ranks wait for rank 7 at the first all-to-all; rank 1 waits longest (7.6 ms), and its
  // idle GPU shows it as a dependency.
  EXPECT_EQ(waited_most_rank, 1);
  EXPECT_GT(waited_most, 7000.0);
}

}  // namespace
