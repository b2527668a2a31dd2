// Renders `lumos place --sweep-grid-intensity` and `--sweep-lifetime` (carbon/sensitivity.hpp):
// a text table, JSON, CSV and an SVG chart of the carbon SCI's choice adds over oSCI's.
#pragma once
#include <ostream>

#include "carbon/sensitivity.hpp"

namespace lumos::report {

void sensitivity_text(std::ostream& os, const carbon::Fleet& f, const carbon::SensitivitySweep& w,
                      const carbon::CarbonSettings& reference);
void sensitivity_json(std::ostream& os, const carbon::Fleet& f, const carbon::SensitivitySweep& w,
                      const carbon::CarbonSettings& reference);
void sensitivity_csv(std::ostream& os, const carbon::Fleet& f, const carbon::SensitivitySweep& w);
// Two lines: SCI's pick at each value, and the pick it makes at the reference settings.
void sensitivity_svg(std::ostream& os, const carbon::Fleet& f, const carbon::SensitivitySweep& w,
                     const carbon::CarbonSettings& reference);

}  // namespace lumos::report
