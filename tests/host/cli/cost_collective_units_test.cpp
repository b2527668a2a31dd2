// `lumos cost collective --json`: each bandwidth field holds the unit its name says
// (docs/reference/outputs.md, "Units"): gigabytes per second under _gb_per_s, recomputed here
// from the document's own bytes and time with nccl-tests' formulas; no _gbps field holds GB/s.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <string>

#include "support/test_util.hpp"

namespace {

using lumos::testing::run_lumos;

TEST(CostCollectiveUnits, BandwidthsAreGigabytesPerSecondUnderTheirName) {
  const auto r =
      run_lumos("cost collective --op allgather --bytes 64MiB --ranks 16 --algo ring --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  simdjson::dom::parser p;
  simdjson::dom::element d;
  ASSERT_EQ(p.parse(r.out).get(d), simdjson::SUCCESS) << r.out;
  // Version 2: the fields were renamed.
  EXPECT_EQ(d["schema_version"].get_int64().value(), 2);
  EXPECT_EQ(d["algbw_gbps"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(d["busbw_gbps"].error(), simdjson::NO_SUCH_FIELD);
  const double bytes = 64.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(d["bytes"].get_double().value(), bytes);
  const double seconds = d["time_us"].get_double().value() * 1e-6;
  const double algbw = d["algbw_gb_per_s"].get_double().value();
  EXPECT_NEAR(algbw, bytes / seconds / 1e9, 1e-6 * algbw);
  // nccl-tests: an all-gather's bus bandwidth is its algorithm bandwidth x (n - 1) / n.
  EXPECT_NEAR(d["busbw_gb_per_s"].get_double().value(), algbw * 15 / 16, 1e-6 * algbw);
  // The text answer quotes the same number in GB/s.
  const auto text =
      run_lumos("cost collective --op allgather --bytes 64MiB --ranks 16 --algo ring");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  char expected[64];
  std::snprintf(expected, sizeof expected, "algbw %.1f GB/s", algbw);
  EXPECT_NE(text.out.find(expected), std::string::npos) << text.out;
}

}  // namespace
