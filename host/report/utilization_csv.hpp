// `lumos replay --utilization-bin`: GPU busy fraction per bin (replay/utilization_bins.hpp) as
// CSV, one row per rank and bin: rank,bin_start_us,bin_end_us,traced_busy_fraction,
// replayed_busy_fraction.
#pragma once
#include <ostream>
#include <vector>

#include "replay/utilization_bins.hpp"

namespace lumos::report {

void utilization_csv(std::ostream& os, const std::vector<replay::UtilizationSeries>& series);

}  // namespace lumos::report
