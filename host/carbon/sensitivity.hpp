// How much carbon SCI's choice adds as the grid intensity or the servers' lifetime varies (The
// Sunk Carbon Fallacy, SoCC 2024, §4, its Figs. 3 and 4), on the per-score-year comparison of
// the paper's Table 2 (score_year_table): one score-year of work on one server type, the cluster
// footprint being every type's embodied carbon plus the chosen type's operational carbon.
#pragma once
#include <string>
#include <vector>

#include "carbon/placement.hpp"

namespace lumos::carbon {

enum class SweepParameter { kGridIntensity, kLifetime };

struct SensitivityPoint {
  double value = 0;  // the grid intensity (gCO2/kWh) or every server's lifetime (years)
  // Embodied carbon's share of the per-score-year total over the server types: sum of M / sum
  // of (M + O), one score-year on each type (the paper's "embodied share of lifecycle").
  double embodied_share = 0;
  size_t osci_pick = 0, sci_pick = 0;  // pools
  double added_sci = 0;                // SCI's pick at this value over oSCI's (Table 2's figure)
  // The pool SCI picks at the reference settings, kept at this value, over oSCI's pick: what the
  // fallacy costs once made, as efficiency gains or loses weight (Fig. 3: +48% for the paper's
  // S_A as the embodied share goes to 0; Fig. 4: more with a longer lifetime).
  double added_reference_pick = 0;
};

struct SensitivitySweep {
  SweepParameter parameter = SweepParameter::kGridIntensity;
  size_t reference_pick = 0;  // SCI's pick at the reference settings
  std::vector<SensitivityPoint> points;
};

// `reference`: the settings the fleet is run at (grid intensity, amortization); each value
// replaces the grid intensity, or every server type's lifetime. Throws InputError for a fleet
// without scores, a negative intensity or a lifetime that is not positive.
SensitivitySweep sensitivity_sweep(const Fleet& f, const CarbonSettings& reference,
                                   SweepParameter parameter, const std::vector<double>& values,
                                   const ProgressFn& progress = {});

// "FROM:TO:STEP" -> FROM, FROM + STEP, ..., TO (included when the step reaches it), each in
// [lo, hi], at most 10,000 values. Throws InputError naming `what`, with `example` as a
// well-formed value.
std::vector<double> parse_sweep_values(const std::string& text, const std::string& what, double lo,
                                       double hi, const std::string& example = "0:600:10");

const char* to_string(SweepParameter p);

}  // namespace lumos::carbon
