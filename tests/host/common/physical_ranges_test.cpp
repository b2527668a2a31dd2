// The shared ranges of physical quantities: bounds included, non-finite values refused, and a
// message that names where the value came from, what it is and its range.
#include "common/physical_ranges.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/error.hpp"

namespace {

using namespace lumos;

std::string message_of(const PhysicalRange& r, double v) {
  try {
    expect_in_range(r, v, "f.toml:3: pue");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PhysicalRanges, BoundsAreIncludedAndEverythingOutsideIsRefused) {
  EXPECT_TRUE(in_range(kPueRange, 1));
  EXPECT_TRUE(in_range(kPueRange, 5));
  EXPECT_FALSE(in_range(kPueRange, 0.999));
  EXPECT_FALSE(in_range(kPueRange, 5.001));
  EXPECT_TRUE(in_range(kAgeRange, 0));
  EXPECT_FALSE(in_range(kAgeRange, -1e-9));
  EXPECT_FALSE(in_range(kAgeRange, 1e300));
  EXPECT_FALSE(in_range(kLifetimeRange, 0));
  EXPECT_FALSE(in_range(kServerPowerRange, 1e308));
  EXPECT_FALSE(in_range(kGridIntensityRange, 10000.5));
}

TEST(PhysicalRanges, NonFiniteValuesAreNeverInRange) {
  for (const PhysicalRange* r : {&kAgeRange, &kLifetimeRange, &kServerPowerRange, &kPueRange,
                                 &kGridIntensityRange, &kEmbodiedRange}) {
    EXPECT_FALSE(in_range(*r, std::numeric_limits<double>::infinity())) << r->quantity;
    EXPECT_FALSE(in_range(*r, -std::numeric_limits<double>::infinity())) << r->quantity;
    EXPECT_FALSE(in_range(*r, std::nan(""))) << r->quantity;
  }
}

TEST(PhysicalRanges, TheRangeIsWrittenWithItsUnit) {
  EXPECT_EQ(range_text(kPueRange), "[1, 5]");
  EXPECT_EQ(range_text(kAgeRange), "[0, 100] years");
  EXPECT_EQ(range_text(kLifetimeRange), "[0.1, 100] years");
  EXPECT_EQ(range_text(kServerPowerRange), "[0, 1000000] W");
  EXPECT_EQ(range_text(kGridIntensityRange), "[0, 10000] gCO2/kWh");
}

TEST(PhysicalRanges, ARefusalNamesWhereWhatAndTheRange) {
  EXPECT_EQ(message_of(kPueRange, 1e308), "f.toml:3: pue: expected a PUE in [1, 5], got 1e+308");
  EXPECT_EQ(message_of(kPueRange, 1.2), "");
  EXPECT_DOUBLE_EQ(expect_in_range(kPueRange, 1.2, "x"), 1.2);
}

TEST(PhysicalRanges, AResultThatIsNotFiniteIsRefusedNamingIt) {
  EXPECT_DOUBLE_EQ(expect_finite_result(3.5, "energy"), 3.5);
  try {
    expect_finite_result(std::numeric_limits<double>::infinity(), "place: energy");
    FAIL() << "inf accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("place: energy is not a finite number", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(expect_finite_result(std::nan(""), "x"), InputError);
}

}  // namespace
