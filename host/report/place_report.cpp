#include "report/place_report.hpp"

#include <string>

#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/line_chart_svg.hpp"

namespace lumos::report {

using namespace lumos::carbon;

namespace {

double kg(double g) {
  return g / 1000.0;
}

std::string footprint_words(const CarbonSettings& s) {
  switch (s.footprint) {
    case CarbonSettings::Footprint::kMarginal:
      return "marginal (the jobs' operational carbon)";
    case CarbonSettings::Footprint::kFleet:
      return "fleet (every server's embodied carbon + the jobs' operational)";
    case CarbonSettings::Footprint::kPaper:
      break;
  }
  return strprintf(
      "paper (every server's embodied carbon + the jobs' operational + %.4g W base power per "
      "server running jobs)",
      s.server_base_w);
}

}  // namespace

void placements_text(std::ostream& os, const Fleet& f, const std::vector<Job>& jobs,
                     const std::vector<Placement>& ps, const CarbonSettings& s) {
  os << strprintf(
      "lumos place: fleet %s (%zu server types), %zu jobs, grid %.4g gCO2/kWh, PUE %.3g, "
      "embodied amortized %s over %.0f h%s\n",
      f.name.c_str(), f.pools.size(), jobs.size(), s.grid_g_per_kwh, f.pue,
      to_string(s.amortization), ps[0].horizon_h,
      s.procurement ? "; procurement: embodied carbon of the servers the jobs need" : "");
  os << "  metric  footprint kg  embodied kg (" << (s.procurement ? "bought" : "sunk")
     << ")  operational kg  energy kWh  vs oSCI\n";
  for (const Placement& p : ps)
    os << strprintf("  %-6s %13.3f %19.3f %15.3f %11.1f  %+6.2f%%\n", to_string(p.metric),
                    kg(p.footprint_g()), kg(p.embodied_g), kg(p.operational_g), p.energy_kwh,
                    100 * (p.footprint_g() / ps[0].footprint_g() - 1));
  os << "  placements (metric value when placed, kgCO2):\n";
  for (size_t j = 0; j < jobs.size() && j < 50; ++j) {
    os << strprintf("  %-20s", jobs[j].name.c_str());
    for (const Placement& p : ps)
      os << strprintf("  %s: %s (%.3f)", to_string(p.metric),
                      jobs[j].options[p.option_of[j]].label.c_str(), kg(p.metric_g[j]));
    os << '\n';
  }
  if (jobs.size() > 50) os << strprintf("  ... %zu more jobs\n", jobs.size() - 50);
}

void placements_json(std::ostream& os, const Fleet& f, const std::vector<Job>& jobs,
                     const std::vector<Placement>& ps, const CarbonSettings& s) {
  common::JsonWriter w(os);
  w.begin_object().field("fleet", f.name).field("grid_g_per_kwh", s.grid_g_per_kwh);
  w.field("pue", f.pue).field("amortization", to_string(s.amortization));
  w.field("procurement", s.procurement);
  w.field("horizon_h", ps[0].horizon_h).key("metrics").begin_array();
  for (const Placement& p : ps) {
    w.begin_object().field("metric", to_string(p.metric));
    w.field("footprint_g", p.footprint_g()).field("embodied_g", p.embodied_g);
    w.field("operational_g", p.operational_g).field("energy_kwh", p.energy_kwh);
    w.field("added_over_osci", p.footprint_g() / ps[0].footprint_g() - 1);
    w.key("jobs").begin_array();
    for (size_t j = 0; j < jobs.size(); ++j) {
      const JobOption& o = jobs[j].options[p.option_of[j]];
      w.begin_object().field("job", jobs[j].name).field("server", f.pools[o.pool].name);
      w.field("option", o.label).field("resources", o.resources).field("hours", o.hours);
      w.field("metric_g", p.metric_g[j]).end_object();
    }
    w.end_array().end_object();
  }
  w.end_array().end_object();
  os << '\n';
}

void score_year_text(std::ostream& os, const Fleet& f, const ScoreYearTable& t,
                     const CarbonSettings& s) {
  os << strprintf(
      "lumos place --score-year: fleet %s, grid %.4g gCO2/kWh, PUE %.3g, embodied amortized %s "
      "(gCO2 per score-year; one server per type)\n",
      f.name.c_str(), s.grid_g_per_kwh, f.pue, to_string(s.amortization));
  os << "  server                    M       O     SCI    tSCI    oSCI\n";
  for (const ScoreYearRow& r : t.rows)
    os << strprintf("  %-20s %7.3f %7.3f %7.3f %7.3f %7.3f\n", r.name.c_str(), r.m, r.o, r.sci,
                    r.tsci, r.osci);
  for (size_t i = 0; i < kMetrics.size(); ++i)
    os << strprintf("  %-5s picks %-20s cluster footprint %.4f  (%+.2f%% over oSCI)\n",
                    to_string(kMetrics[i]), t.rows[t.chosen[i]].name.c_str(), t.footprint[i],
                    100 * t.added_over_osci[i]);
}

void score_year_json(std::ostream& os, const Fleet& f, const ScoreYearTable& t,
                     const CarbonSettings& s) {
  common::JsonWriter w(os);
  w.begin_object().field("fleet", f.name).field("grid_g_per_kwh", s.grid_g_per_kwh);
  w.field("amortization", to_string(s.amortization)).key("servers").begin_array();
  for (const ScoreYearRow& r : t.rows)
    w.begin_object()
        .field("name", r.name)
        .field("m", r.m)
        .field("o", r.o)
        .field("sci", r.sci)
        .field("tsci", r.tsci)
        .field("osci", r.osci)
        .end_object();
  w.end_array().key("metrics").begin_array();
  for (size_t i = 0; i < kMetrics.size(); ++i)
    w.begin_object()
        .field("metric", to_string(kMetrics[i]))
        .field("chosen", t.rows[t.chosen[i]].name)
        .field("footprint", t.footprint[i])
        .field("added_over_osci", t.added_over_osci[i])
        .end_object();
  w.end_array().end_object();
  os << '\n';
}

void utilization_csv(std::ostream& os, const std::vector<UtilizationPoint>& pts) {
  os << "utilization,jobs,footprint_osci_kg,footprint_sci_kg,footprint_tsci_kg,added_sci,"
        "added_tsci,unplaced_osci,unplaced_sci,unplaced_tsci\n";
  for (const UtilizationPoint& p : pts)
    os << strprintf("%.6g,%llu,%.9g,%.9g,%.9g,%.6g,%.6g,%llu,%llu,%llu\n", p.utilization,
                    static_cast<unsigned long long>(p.jobs), kg(p.footprint_g[0]),
                    kg(p.footprint_g[1]), kg(p.footprint_g[2]), p.added_over_osci[1],
                    p.added_over_osci[2], static_cast<unsigned long long>(p.unplaced[0]),
                    static_cast<unsigned long long>(p.unplaced[1]),
                    static_cast<unsigned long long>(p.unplaced[2]));
}

void utilization_json(std::ostream& os, const Fleet& f, const std::vector<UtilizationPoint>& pts,
                      const CarbonSettings& s) {
  common::JsonWriter w(os);
  w.begin_object().field("fleet", f.name).field("amortization", to_string(s.amortization));
  w.field("footprint", to_string(s.footprint)).key("points").begin_array();
  for (const UtilizationPoint& p : pts)
    w.begin_object()
        .field("utilization", p.utilization)
        .field("jobs", p.jobs)
        .field("footprint_osci_g", p.footprint_g[0])
        .field("footprint_sci_g", p.footprint_g[1])
        .field("footprint_tsci_g", p.footprint_g[2])
        .field("added_sci", p.added_over_osci[1])
        .field("added_tsci", p.added_over_osci[2])
        .field("unplaced_osci", p.unplaced[0])
        .field("unplaced_sci", p.unplaced[1])
        .field("unplaced_tsci", p.unplaced[2])
        .end_object();
  w.end_array().end_object();
  os << '\n';
}

void utilization_text(std::ostream& os, const Fleet& f, const std::vector<UtilizationPoint>& pts,
                      const CarbonSettings& s) {
  size_t peak = 0;
  for (size_t i = 0; i < pts.size(); ++i)
    if (pts[i].added_over_osci[1] > pts[peak].added_over_osci[1]) peak = i;
  os << strprintf(
      "lumos place --utilization: fleet %s, %zu levels, grid %.4g gCO2/kWh, amortization %s, "
      "footprint %s\n",
      f.name.c_str(), pts.size(), s.grid_g_per_kwh, to_string(s.amortization),
      footprint_words(s).c_str());
  os << "  utilization   jobs   SCI over oSCI   tSCI over oSCI   unplaced (fit on no "
        "single server type; oSCI/SCI/tSCI)\n";
  for (const UtilizationPoint& p : pts)
    os << strprintf("  %10.1f%% %6llu %+14.2f%% %+15.2f%%   %llu/%llu/%llu\n", 100 * p.utilization,
                    static_cast<unsigned long long>(p.jobs), 100 * p.added_over_osci[1],
                    100 * p.added_over_osci[2], static_cast<unsigned long long>(p.unplaced[0]),
                    static_cast<unsigned long long>(p.unplaced[1]),
                    static_cast<unsigned long long>(p.unplaced[2]));
  os << strprintf("  SCI adds most at %.1f%% utilization: %+.2f%% carbon\n",
                  100 * pts[peak].utilization, 100 * pts[peak].added_over_osci[1]);
}

void utilization_svg(std::ostream& os, const Fleet& f, const std::vector<UtilizationPoint>& pts,
                     const CarbonSettings& s) {
  std::vector<ChartSeries> lines = {{"SCI over oSCI", "#d62728", {}},
                                    {"tSCI over oSCI", "#1f77b4", {}}};
  for (const UtilizationPoint& p : pts) {
    lines[0].points.emplace_back(p.utilization, p.added_over_osci[1]);
    lines[1].points.emplace_back(p.utilization, p.added_over_osci[2]);
  }
  line_chart_svg(os,
                 strprintf("Carbon added over oSCI: %s, %s, %s footprint", f.name.c_str(),
                           to_string(s.amortization), to_string(s.footprint)),
                 "fleet utilization", "added cluster carbon footprint", lines, true, true);
}

}  // namespace lumos::report
