#include "cost/size_units.hpp"

#include <cmath>
#include <cstdlib>

#include "common/error.hpp"

namespace lumos::cost {

double parse_bytes(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  LUMOS_EXPECT(end != text.c_str() && std::isfinite(v) && v >= 0,
               what + ": expected a size such as 4096, 64MiB or 1GiB, got '" + text + "'");
  const std::string unit(end);
  double scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KiB" || unit == "K" || unit == "k")
    scale = 1024.0;
  else if (unit == "MiB" || unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "TiB" || unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (unit == "KB" || unit == "kB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  else if (unit == "TB")
    scale = 1e12;
  else
    throw InputError(what + ": unknown unit '" + unit +
                     "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
  return v * scale;
}

}  // namespace lumos::cost
