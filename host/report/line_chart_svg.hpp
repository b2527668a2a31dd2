// A line chart as SVG (no plotting library needed): lumos place --plot draws the case study's
// added-carbon curve with it, and README's figure is that output.
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace lumos::report {

struct ChartSeries {
  std::string name;
  std::string color;                              // an SVG colour, e.g. "#d62728"
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
};

// Axes from 0 (or the smallest value, when negative) to the largest, with ticks; `y_percent`
// prints y tick labels as percentages of 1.
void line_chart_svg(std::ostream& os, const std::string& title, const std::string& x_label,
                    const std::string& y_label, const std::vector<ChartSeries>& series,
                    bool x_percent, bool y_percent);

}  // namespace lumos::report
