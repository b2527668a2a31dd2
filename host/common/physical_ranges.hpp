// The ranges of the physical quantities that several commands take (a fleet file's servers,
// `place --grid-intensity`, `carbon --pue`, `sweep --pue`, kernels_db/carbon.json, a grid
// series): one definition each, so that every command accepts the same values and names the
// same range when it refuses one. The bounds are far beyond any real server or grid and far
// inside a double's range, so that no product of them (energy, carbon, per-year amortization)
// overflows into inf or a 300-digit number (docs/design.md, input ranges).
#pragma once
#include <string>

namespace lumos {

struct PhysicalRange {
  const char* quantity;  // as messages name it
  const char* unit;      // "" for a ratio
  double min, max;       // both included
};

inline constexpr PhysicalRange kAgeRange{"an age", "years", 0, 100};
inline constexpr PhysicalRange kLifetimeRange{"a lifetime", "years", 0.1, 100};
inline constexpr PhysicalRange kServerPowerRange{"a power", "W", 0, 1e6};
inline constexpr PhysicalRange kPueRange{"a PUE", "", 1, 5};
inline constexpr PhysicalRange kGridIntensityRange{"a grid intensity", "gCO2/kWh", 0, 1e4};
inline constexpr PhysicalRange kEmbodiedRange{"an embodied carbon", "kg", 0, 1e6};
inline constexpr PhysicalRange kJobHoursRange{"a job's length", "hours", 1e-9, 1e6};

// "[1, 5]", "[0, 100] years".
std::string range_text(const PhysicalRange& r);

// Finite and inside the range.
bool in_range(const PhysicalRange& r, double v);

// `v` when in_range; otherwise throws InputError "WHERE: expected QUANTITY in RANGE, got V".
double expect_in_range(const PhysicalRange& r, double v, const std::string& where);

// `v` when finite; otherwise throws InputError naming the quantity: a result that overflowed
// is refused, never printed as inf or nan.
double expect_finite_result(double v, const std::string& quantity);

}  // namespace lumos
