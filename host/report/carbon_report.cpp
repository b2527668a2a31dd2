#include "report/carbon_report.hpp"

#include "common/engineering.hpp"
#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::report {

void carbon_text(std::ostream& os, const estimate::CarbonAnswer& a, const cost::CarbonParams& p) {
  const carbon::EnergyParts& parts = a.per_gpu_step;
  const carbon::CarbonAccount& acc = a.account;
  os << a.subject << '\n';
  const double step_s = a.step_us * 1e-6;
  os << strprintf(
      "  power per GPU     %.0f W: idle %.0f, matrix %.0f, memory-bound %.0f, comm %.0f; node "
      "%.0f; facility %.0f (PUE %.2f)\n",
      parts.total_j() / step_s, parts.gpu_idle_j / step_s, parts.gpu_compute_j / step_s,
      parts.gpu_memory_j / step_s, parts.gpu_comm_j / step_s, parts.node_j / step_s,
      parts.facility_j / step_s, a.pue);
  // One unit per quantity, as every table writes it: energy in Wh, carbon in t CO2e, with prefixes.
  const auto wh = [](double kwh) { return si(kwh * 1e3, "Wh"); };
  const auto co2 = [](double kg) { return si(kg / 1e3, "t CO2e"); };
  os << "  energy            " << wh(acc.energy_kwh) << ": GPUs " << wh(acc.gpu_kwh) << ", nodes "
     << wh(acc.node_kwh) << ", facility " << wh(acc.facility_kwh) << '\n';
  os << "  grid              " << a.grid << '\n';
  os << "  operational       " << co2(acc.operational_kg) << '\n';
  if (a.best)
    os << strprintf(
        "  best start        %s: mean %.1f gCO2/kWh, %s (%+.1f%%; the worst start in "
        "the window: %.1f gCO2/kWh)\n",
        carbon::format_utc(a.best->start_unix_s).c_str(), a.best->mean_g_per_kwh,
        co2(acc.energy_kwh * a.best->mean_g_per_kwh / 1e3).c_str(),
        a.grid_g_per_kwh > 0 ? 100 * (a.best->mean_g_per_kwh / a.grid_g_per_kwh - 1) : 0.0,
        a.best->worst_mean_g_per_kwh);
  os << strprintf(
      "  embodied (beside) %s: %s of %.0f kg CO2e per GPU and its server share, linear over %.0f "
      "years; SCI %s. Placing and scheduling owned hardware: decide on operational carbon "
      "(lumos place)\n",
      co2(acc.embodied_kg).c_str(), engineering(a.hours * a.gpus, "GPU-h").c_str(),
      p.gpu_embodied_kg + p.server_embodied_kg_per_gpu, p.lifetime_y, co2(acc.sci_kg).c_str());
}

void carbon_json(std::ostream& os, const estimate::CarbonAnswer& a) {
  const carbon::EnergyParts& parts = a.per_gpu_step;
  const carbon::CarbonAccount& acc = a.account;
  common::JsonWriter w(os);
  w.begin_object().field("subject", a.subject).field("gpus", a.gpus);
  w.field("step_time_s", a.step_us * 1e-6).field("steps", a.steps);
  w.field("hours", a.hours).field("pue", a.pue);
  w.key("step_energy_per_gpu_j").begin_object().field("gpu_idle", parts.gpu_idle_j);
  w.field("gpu_compute_bound", parts.gpu_compute_j).field("gpu_memory_bound", parts.gpu_memory_j);
  w.field("gpu_comm", parts.gpu_comm_j).field("node", parts.node_j);
  w.field("facility", parts.facility_j).field("total", parts.total_j()).end_object();
  w.field("gpu_energy_kwh", acc.gpu_kwh).field("node_energy_kwh", acc.node_kwh);
  w.field("facility_energy_kwh", acc.facility_kwh).field("energy_kwh", acc.energy_kwh);
  w.field("grid_g_per_kwh", a.grid_g_per_kwh).field("grid", a.grid);
  w.field("operational_kg", acc.operational_kg).field("embodied_kg", acc.embodied_kg);
  w.field("sci_kg", acc.sci_kg);
  if (a.best)
    w.key("best_start")
        .begin_object()
        .field("start", carbon::format_utc(a.best->start_unix_s))
        .field("mean_g_per_kwh", a.best->mean_g_per_kwh)
        .field("operational_kg", acc.energy_kwh * a.best->mean_g_per_kwh / 1000.0)
        .field("worst_mean_g_per_kwh", a.best->worst_mean_g_per_kwh)
        .end_object();
  w.end_object();
  os << '\n';
}

}  // namespace lumos::report
