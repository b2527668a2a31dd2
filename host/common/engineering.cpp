#include "common/engineering.hpp"

#include <cmath>
#include <cstdio>
#include <iterator>
#include <string>

namespace lumos {

namespace {

struct Scaled {
  double mantissa;
  const char* prefix;
};

// Three significant digits, rounded before the prefix is chosen so that 999.6 k becomes 1.00 M.
Scaled scale(double value) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  const double rounded = std::stod([&] {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", value);
    return std::string(buf);
  }());
  double m = rounded;
  size_t i = 0;
  while (std::fabs(m) >= 1000 && i + 1 < std::size(kPrefixes)) m /= 1000, ++i;
  return {m, kPrefixes[i]};
}

// 1.00, 12.3, 123: three significant digits, trailing zeros kept (they are significant).
std::string mantissa_text(double m) {
  char buf[32];
  const double a = std::fabs(m);
  if (m == 0)
    std::snprintf(buf, sizeof buf, "0");
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.0f", m);
  else if (a >= 10)
    std::snprintf(buf, sizeof buf, "%.1f", m);
  else if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.2f", m);
  else
    std::snprintf(buf, sizeof buf, "%#.3g", m);  // '#' keeps the zeros: 0.150
  return buf;
}

}  // namespace

std::string engineering(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "-";
  const Scaled s = scale(value);
  return mantissa_text(s.mantissa) + " " + (*s.prefix ? std::string(s.prefix) + " " : "") + unit;
}

std::string si(double value, const std::string& unit) {
  if (!std::isfinite(value)) return "-";
  const Scaled s = scale(value);
  return mantissa_text(s.mantissa) + " " + s.prefix + unit;
}

}  // namespace lumos
