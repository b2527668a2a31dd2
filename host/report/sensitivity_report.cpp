#include "report/sensitivity_report.hpp"

#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/line_chart_svg.hpp"

namespace lumos::report {

using namespace lumos::carbon;

namespace {

std::string reference_text(const Fleet& f, const SensitivitySweep& w, const CarbonSettings& s) {
  return strprintf("reference: grid %.4g gCO2/kWh, amortized %s; SCI picks %s there",
                   s.grid_g_per_kwh, to_string(s.amortization),
                   f.pools[w.reference_pick].name.c_str());
}

}  // namespace

void sensitivity_text(std::ostream& os, const Fleet& f, const SensitivitySweep& w,
                      const CarbonSettings& reference) {
  const bool grid = w.parameter == SweepParameter::kGridIntensity;
  os << strprintf("lumos place --sweep-%s: fleet %s, %zu values, per score-year (%s)\n",
                  grid ? "grid-intensity" : "lifetime", f.name.c_str(), w.points.size(),
                  reference_text(f, w, reference).c_str());
  os << strprintf(
      "  %14s  embodied share  oSCI picks            SCI picks             SCI adds  "
      "on %s adds\n",
      grid ? "gCO2/kWh" : "lifetime (y)", f.pools[w.reference_pick].name.c_str());
  for (const SensitivityPoint& p : w.points)
    os << strprintf("  %14.4g %14.1f%%  %-20s  %-20s %+8.2f%% %+12.2f%%\n", p.value,
                    100 * p.embodied_share, f.pools[p.osci_pick].name.c_str(),
                    f.pools[p.sci_pick].name.c_str(), 100 * p.added_sci,
                    100 * p.added_reference_pick);
}

void sensitivity_json(std::ostream& os, const Fleet& f, const SensitivitySweep& w,
                      const CarbonSettings& reference) {
  common::JsonWriter j(os);
  j.begin_object().field("fleet", f.name).field("parameter", to_string(w.parameter));
  j.field("grid_g_per_kwh", reference.grid_g_per_kwh);
  j.field("amortization", to_string(reference.amortization));
  j.field("reference_sci_server", f.pools[w.reference_pick].name).key("points").begin_array();
  for (const SensitivityPoint& p : w.points)
    j.begin_object()
        .field("value", p.value)
        .field("embodied_share", p.embodied_share)
        .field("osci_server", f.pools[p.osci_pick].name)
        .field("sci_server", f.pools[p.sci_pick].name)
        .field("added_sci", p.added_sci)
        .field("added_reference_pick", p.added_reference_pick)
        .end_object();
  j.end_array().end_object();
  os << '\n';
}

void sensitivity_csv(std::ostream& os, const Fleet& f, const SensitivitySweep& w) {
  os << to_string(w.parameter)
     << ",embodied_share,osci_server,sci_server,added_sci,reference_sci_server,"
        "added_reference_pick\n";
  for (const SensitivityPoint& p : w.points)
    os << strprintf("%.6g,%.6g,%s,%s,%.6g,%s,%.6g\n", p.value, p.embodied_share,
                    f.pools[p.osci_pick].name.c_str(), f.pools[p.sci_pick].name.c_str(),
                    p.added_sci, f.pools[w.reference_pick].name.c_str(), p.added_reference_pick);
}

void sensitivity_svg(std::ostream& os, const Fleet& f, const SensitivitySweep& w,
                     const CarbonSettings& reference) {
  const bool grid = w.parameter == SweepParameter::kGridIntensity;
  std::vector<ChartSeries> lines = {
      {"SCI's pick", "#d62728", {}},
      {"on " + f.pools[w.reference_pick].name + " (reference pick)", "#1f77b4", {}}};
  for (const SensitivityPoint& p : w.points) {
    lines[0].points.emplace_back(p.value, p.added_sci);
    lines[1].points.emplace_back(p.value, p.added_reference_pick);
  }
  line_chart_svg(os,
                 strprintf("Carbon added over oSCI's choice: %s, by %s", f.name.c_str(),
                           grid ? "grid intensity" : "lifetime"),
                 grid ? "grid intensity (gCO2/kWh)" : "lifetime (years)",
                 "added cluster carbon footprint", lines, false, true);
}

}  // namespace lumos::report
