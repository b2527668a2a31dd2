#include "carbon/embodied.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace lumos::carbon {

Amortization parse_amortization(const std::string& text, const std::string& what) {
  if (text == "linear") return Amortization::kLinear;
  if (text == "zero-after-lifetime") return Amortization::kZeroAfterLifetime;
  if (text == "years-in-service") return Amortization::kYearsInService;
  throw InputError(what + " " + text +
                   ": expected linear, zero-after-lifetime or years-in-service");
}

const char* to_string(Amortization a) {
  switch (a) {
    case Amortization::kLinear:
      return "linear";
    case Amortization::kZeroAfterLifetime:
      return "zero-after-lifetime";
    case Amortization::kYearsInService:
      return "years-in-service";
  }
  return "?";
}

double embodied_g_per_year(double embodied_g, double lifetime_y, double age_y, Amortization a) {
  LUMOS_EXPECT(embodied_g >= 0 && std::isfinite(embodied_g),
               "embodied carbon must be a non-negative number");
  LUMOS_EXPECT(lifetime_y > 0 && std::isfinite(lifetime_y), "lifetime must be positive");
  LUMOS_EXPECT(age_y >= 0 && std::isfinite(age_y), "age must be a non-negative number");
  switch (a) {
    case Amortization::kLinear:
      return embodied_g / lifetime_y;
    case Amortization::kZeroAfterLifetime:
      return age_y > lifetime_y ? 0.0 : embodied_g / lifetime_y;
    case Amortization::kYearsInService:
      return embodied_g / std::max(lifetime_y, age_y);
  }
  return 0;
}

}  // namespace lumos::carbon
