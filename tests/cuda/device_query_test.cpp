// The CUDA backend links and answers without a GPU; with one, it reports sane properties.
#include <gtest/gtest.h>

#include "device_query.hpp"

TEST(DeviceQuery, ReportsDevicesOrNoneWithoutThrowing) {
  const auto devs = lumos::cuda::visible_devices();
  if (devs.empty()) GTEST_SKIP() << "no GPU visible to the CUDA runtime: nothing to check";
  for (const auto& d : devs) {
    EXPECT_GT(d.sm_count, 0);
    EXPECT_GE(d.compute_major, 7);
    EXPECT_GT(d.memory_bytes, size_t{1} << 30);
  }
}

TEST(DeviceQuery, RuntimeVersionIsThirteenOrNewer) {
  EXPECT_GE(lumos::cuda::runtime_version(), 13000);
}
