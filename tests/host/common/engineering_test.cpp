// Engineering notation as the tables print it: three significant digits, an SI prefix, the unit.
#include <gtest/gtest.h>

#include <cmath>

#include "common/engineering.hpp"

namespace {

using lumos::engineering;
using lumos::si;

TEST(Engineering, CountsAndRatesTakeAPrefixAndTheirUnit) {
  EXPECT_EQ(engineering(1e6, "tokens/s"), "1.00 M tokens/s");
  EXPECT_EQ(engineering(9.759e5, "tokens/s"), "976 k tokens/s");
  EXPECT_EQ(engineering(85312, "GPU-h"), "85.3 k GPU-h");
  EXPECT_EQ(engineering(512, "GPUs"), "512 GPUs");
  EXPECT_EQ(engineering(0.25, "h"), "0.250 h");
  EXPECT_EQ(engineering(0.1499, "t"), "0.150 t");
  EXPECT_EQ(engineering(2.5e12, "FLOP"), "2.50 T FLOP");
}

TEST(Engineering, RoundingCarriesIntoTheNextPrefix) {
  EXPECT_EQ(engineering(999600, "tokens/s"), "1.00 M tokens/s");
  EXPECT_EQ(engineering(999.6, "GPU-h"), "1.00 k GPU-h");
}

TEST(Engineering, PhysicalUnitsJoinThePrefix) {
  EXPECT_EQ(si(1.05e8, "Wh"), "105 MWh");
  EXPECT_EQ(si(4.2e3, "Wh"), "4.20 kWh");
  EXPECT_EQ(si(12, "t"), "12.0 t");
}

TEST(Engineering, NonFiniteIsADash) {
  EXPECT_EQ(engineering(NAN, "GPUs"), "-");
  EXPECT_EQ(si(INFINITY, "Wh"), "-");
}

}  // namespace
