// A sweep's configurations are counted from its axes before anything is expanded: the count
// equals what expand() gives, and a spec above the cap is refused without expanding it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "common/error.hpp"
#include "sweep/sweep_spec.hpp"
#include "whatif/speed_axes.hpp"

namespace {

using namespace lumos::sweep;

SweepSpec base() {
  SweepSpec s;
  s.model = lumos::model::preset("gpt3-15b");
  s.tp = {1, 2, 4};
  s.pp = {1, 2, 4, 8};
  s.gpus = {"h100", "a100"};
  s.regions = {"world", "se"};
  return s;
}

TEST(ConfigurationCount, EqualsTheExpansionWithoutGpuTotals) {
  SweepSpec s = base();
  s.dp = {1, 2, 3};
  s.mbs = {1, 2};
  s.speed = lumos::whatif::parse_speed_axes("compute=1,2;comm=1,0.5,0.25", "--speed");
  // 3 x 4 x 3 layouts x 2 mbs x 2 GPUs x 2 regions x 2 x 3 speed-ups.
  EXPECT_EQ(count_configurations(s), 3u * 4 * 3 * 2 * 2 * 2 * 2 * 3);
  EXPECT_EQ(count_configurations(s), expand(s).size());
}

// Only the layouts whose degrees divide a total are configurations.
TEST(ConfigurationCount, EqualsTheExpansionWithGpuTotals) {
  SweepSpec s = base();
  s.total_gpus = {8, 12, 48};
  s.cp = {1, 3};
  ASSERT_EQ(count_configurations(s), expand(s).size());
  // Layouts (tp, cp, pp) with tp x cp x pp dividing the total, counted by hand. 8: cp 1 only,
  // pp dividing 8 / tp: 4 + 3 + 2 = 9. 12: cp 1: 3 + 2 + 1; cp 3: 3 + 2 + 1; 12 in all. 48: cp 1:
  // 4 + 4 + 3; cp 3 (16, 8, 4 left): 4 + 4 + 3; 22 in all. 43 layouts, x 2 GPUs x 2 regions.
  EXPECT_EQ(count_configurations(s), 43u * 2 * 2);
}

TEST(ConfigurationCount, StopsOncePastTheLimitAndSaturatesOnOverflow) {
  SweepSpec s = base();
  s.total_gpus = {64, 128, 256, 512};
  EXPECT_GT(count_configurations(s, 3), 3u);
  EXPECT_LE(count_configurations(s, 3), 3u + 4);  // one layout's configurations past it
  SweepSpec huge = base();
  huge.tp = huge.pp = huge.cp = huge.dp = std::vector<int64_t>(4096, 1);
  huge.mbs = huge.gbs = huge.interleave = std::vector<int64_t>(4096, 1);
  EXPECT_EQ(count_configurations(huge), UINT64_MAX);
}

TEST(ConfigurationCount, ExpandRefusesAboveTheCapBeforeExpanding) {
  SweepSpec s = base();
  s.dp = std::vector<int64_t>(4096, 1);
  s.gbs = std::vector<int64_t>(4096, 1);  // 3 x 4 x 4096 x 4096 x 4 = 805 M configurations
  const auto t0 = std::chrono::steady_clock::now();
  try {
    expand(s);
    FAIL() << "expanded";
  } catch (const lumos::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "sweep: 805306368 configurations; at most 10000000 are expanded (narrow the axes)");
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
  EXPECT_THROW(expand(base(), 10), lumos::InputError);
  EXPECT_EQ(expand(base(), 3 * 4 * 2 * 2).size(), 48u);
}

}  // namespace
