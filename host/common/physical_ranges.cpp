#include "common/physical_ranges.hpp"

#include <cmath>

#include "common/error.hpp"
#include "common/format.hpp"

namespace lumos {

namespace {

// 1000000 rather than 1e+06: the bounds are round numbers.
std::string bound(double v) {
  return v == std::floor(v) ? strprintf("%.0f", v) : strprintf("%g", v);
}

}  // namespace

std::string range_text(const PhysicalRange& r) {
  std::string s = "[" + bound(r.min) + ", " + bound(r.max) + "]";
  if (r.unit[0] != '\0') s += std::string(" ") + r.unit;
  return s;
}

bool in_range(const PhysicalRange& r, double v) {
  return std::isfinite(v) && v >= r.min && v <= r.max;
}

double expect_in_range(const PhysicalRange& r, double v, const std::string& where) {
  LUMOS_EXPECT(in_range(r, v), where + ": expected " + r.quantity + " in " + range_text(r) +
                                   ", got " + strprintf("%g", v));
  return v;
}

double expect_finite_result(double v, const std::string& quantity) {
  LUMOS_EXPECT(std::isfinite(v), quantity +
                                     " is not a finite number (the inputs overflow it); "
                                     "check the inputs' magnitudes");
  return v;
}

}  // namespace lumos
