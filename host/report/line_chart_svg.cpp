#include "report/line_chart_svg.hpp"

#include <algorithm>
#include <cmath>

#include "common/format.hpp"

namespace lumos::report {

namespace {

// Text for SVG: the characters XML reserves, escaped.
std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

// A round tick step giving about `want` ticks over `span`.
double tick_step(double span, int want) {
  const double raw = span / want;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

std::string label(double v, bool percent) {
  return percent ? strprintf("%g%%", std::round(v * 1000) / 10) : strprintf("%g", v);
}

}  // namespace

void line_chart_svg(std::ostream& os, const std::string& title, const std::string& x_label,
                    const std::string& y_label, const std::vector<ChartSeries>& series,
                    bool x_percent, bool y_percent) {
  constexpr double kW = 640, kH = 400, kLeft = 70, kRight = 20, kTop = 40, kBottom = 55;
  double x0 = 0, x1 = 1e-12, y0 = 0, y1 = 1e-12;
  for (const ChartSeries& s : series)
    for (const auto& [x, y] : s.points) {
      x0 = std::min(x0, x), x1 = std::max(x1, x);
      y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  const double ys = tick_step(y1 - y0, 5), xs = tick_step(x1 - x0, 10);
  y1 = std::ceil(y1 / ys) * ys, y0 = std::floor(y0 / ys) * ys;
  auto px = [&](double x) { return kLeft + (x - x0) / (x1 - x0) * (kW - kLeft - kRight); };
  auto py = [&](double y) { return kH - kBottom - (y - y0) / (y1 - y0) * (kH - kTop - kBottom); };
  os << strprintf(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
      "fill=\"white\"/>\n",
      kW, kH);
  os << strprintf("<text x=\"%.0f\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">%s</text>\n",
                  kW / 2, xml(title).c_str());
  for (double y = y0; y <= y1 + ys / 2; y += ys) {
    os << strprintf(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n<text "
        "x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
        px(x0), py(y), px(x1), py(y), px(x0) - 6, py(y) + 4, label(y, y_percent).c_str());
  }
  for (double x = x0; x <= x1 + xs / 2; x += xs)
    os << strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", px(x),
                    py(y0) + 18, label(x, x_percent).c_str());
  os << strprintf(
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n<line "
      "x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
      px(x0), py(y0), px(x1), py(y0), px(x0), py(y0), px(x0), py(y1));
  os << strprintf("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                  (px(x0) + px(x1)) / 2, kH - 12, xml(x_label).c_str());
  os << strprintf(
      "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
      "%.1f)\">%s</text>\n",
      (py(y0) + py(y1)) / 2, (py(y0) + py(y1)) / 2, xml(y_label).c_str());
  for (size_t i = 0; i < series.size(); ++i) {
    const ChartSeries& s = series[i];
    os << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << xml(s.color) << "\" points=\"";
    for (const auto& [x, y] : s.points) os << strprintf("%.1f,%.1f ", px(x), py(y));
    os << "\"/>\n";
    const double ly = kTop + 8 + 18 * static_cast<double>(i);
    os << strprintf(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
        "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
        kW - 190, ly, kW - 165, ly, xml(s.color).c_str(), kW - 160, ly + 4, xml(s.name).c_str());
  }
  os << "</svg>\n";
}

}  // namespace lumos::report
