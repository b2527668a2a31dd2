// Renders `lumos place`: placements by each metric and the fleet's footprint under each, the
// per-score-year tables, and utilization sweeps (text, JSON, CSV and an SVG chart).
#pragma once
#include <ostream>
#include <vector>

#include "carbon/placement.hpp"

namespace lumos::report {

// `ps`: one placement per metric, kMetrics order (carbon::place_by_every_metric).
void placements_text(std::ostream& os, const carbon::Fleet& f, const std::vector<carbon::Job>& jobs,
                     const std::vector<carbon::Placement>& ps, const carbon::CarbonSettings& s);
void placements_json(std::ostream& os, const carbon::Fleet& f, const std::vector<carbon::Job>& jobs,
                     const std::vector<carbon::Placement>& ps, const carbon::CarbonSettings& s);

void score_year_text(std::ostream& os, const carbon::Fleet& f, const carbon::ScoreYearTable& t,
                     const carbon::CarbonSettings& s);
void score_year_json(std::ostream& os, const carbon::Fleet& f, const carbon::ScoreYearTable& t,
                     const carbon::CarbonSettings& s);

void utilization_text(std::ostream& os, const carbon::Fleet& f,
                      const std::vector<carbon::UtilizationPoint>& pts,
                      const carbon::CarbonSettings& s);
void utilization_json(std::ostream& os, const carbon::Fleet& f,
                      const std::vector<carbon::UtilizationPoint>& pts,
                      const carbon::CarbonSettings& s);
void utilization_csv(std::ostream& os, const std::vector<carbon::UtilizationPoint>& pts);
// The carbon SCI and tSCI add over oSCI at each utilization, as two lines.
void utilization_svg(std::ostream& os, const carbon::Fleet& f,
                     const std::vector<carbon::UtilizationPoint>& pts,
                     const carbon::CarbonSettings& s);

}  // namespace lumos::report
