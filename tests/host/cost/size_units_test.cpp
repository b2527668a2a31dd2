// Sizes and bandwidths with units: the range of sizes, and bits versus bytes for bandwidths.
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "cost/size_units.hpp"

using lumos::cost::parse_bandwidth_gbytes_per_s;
using lumos::cost::parse_bytes;

TEST(SizeUnits, SizesAbove2To53BytesAreOutOfRange) {
  EXPECT_DOUBLE_EQ(parse_bytes("1GiB", "--bytes"), 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bytes("8192TiB", "--bytes"), 9007199254740992.0);  // 2^53 exactly
  EXPECT_THROW(parse_bytes("8193TiB", "--bytes"), lumos::InputError);
  try {
    parse_bytes("1e300TiB", "--bytes");
    FAIL();
  } catch (const lumos::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

// Row 23: a 400 Gb/s NIC moves 50 GB/s.
TEST(SizeUnits, FourHundredGbpsIsFiftyGBps) {
  EXPECT_DOUBLE_EQ(parse_bandwidth_gbytes_per_s("400Gbps", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth_gbytes_per_s("400Gb/s", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth_gbytes_per_s("400Gbit/s", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth_gbytes_per_s("50GB/s", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth_gbytes_per_s("50GBps", "x"), 50.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth_gbytes_per_s("1.6Tbps", "x"), 200.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth_gbytes_per_s("800Mbps", "x"), 0.1);
  for (const char* bad : {"400", "400G", "400gbps", "-400Gbps", "0GB/s", "inf Gbps", "1e30TB/s"})
    EXPECT_THROW(parse_bandwidth_gbytes_per_s(bad, "--nic-bandwidth"), lumos::InputError) << bad;
}
