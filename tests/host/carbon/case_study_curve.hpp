// A case-study curve's summary, as the paper states its figures: the peak of what SCI adds over
// oSCI and the band of utilization where it adds more than a threshold.
#pragma once
#include <vector>

#include "carbon/placement.hpp"

namespace lumos::carbon::testing {

struct Curve {
  double peak = 0, peak_at = 0;         // SCI over oSCI
  double band_from = -1, band_to = -1;  // the levels where SCI adds more than the threshold
};

inline Curve curve_of(const std::vector<UtilizationPoint>& points, double threshold) {
  Curve c;
  for (const UtilizationPoint& p : points) {
    const double added = p.added_over_osci[1];
    if (added > c.peak) c.peak = added, c.peak_at = p.utilization;
    if (added > threshold) {
      if (c.band_from < 0) c.band_from = p.utilization;
      c.band_to = p.utilization;
    }
  }
  return c;
}

}  // namespace lumos::carbon::testing
