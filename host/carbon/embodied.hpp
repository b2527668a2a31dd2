// Embodied carbon charged per year of use: SCI's M term needs a lifetime and a policy for
// hardware used past it (The Sunk Carbon Fallacy, SoCC 2024, §3.3; GSF SCI spec v1.1). The
// choice is explicit because SCI's placements are sensitive to it.
#pragma once
#include <string>

namespace lumos::carbon {

enum class Amortization {
  kLinear,             // TE / lifetime for every year, however old (GSF SCI)
  kZeroAfterLifetime,  // TE / lifetime, nothing once older than the lifetime (the paper's first)
  kYearsInService,     // TE / max(lifetime, age): spread over the years it has served (second)
};

// "linear", "zero-after-lifetime", "years-in-service". Throws InputError naming `what`.
Amortization parse_amortization(const std::string& text, const std::string& what);
const char* to_string(Amortization a);

// Grams of embodied carbon per year of use charged to a server of this age. Throws InputError
// for a negative embodied value or age, or a lifetime that is not positive.
double embodied_g_per_year(double embodied_g, double lifetime_y, double age_y, Amortization a);

}  // namespace lumos::carbon
