#include "carbon/energy.hpp"

#include "common/error.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::carbon {

EnergyParts step_energy(const cost::GpuSpec& gpu, const cost::CarbonParams& p, double pue,
                        double step_us, double compute_bound_us, double memory_bound_us,
                        double comm_us) {
  LUMOS_EXPECT(pue >= 1 && pue <= 5, "energy: a PUE must lie in [1, 5]");
  EnergyParts e;
  const double active_w = gpu.tdp_w - gpu.idle_w;
  e.gpu_idle_j = gpu.idle_w * step_us * 1e-6;
  e.gpu_compute_j = active_w * p.compute_bound_fraction * compute_bound_us * 1e-6;
  e.gpu_memory_j = active_w * p.memory_bound_fraction * memory_bound_us * 1e-6;
  e.gpu_comm_j = active_w * p.comm_fraction * comm_us * 1e-6;
  // Overlapping kernels cannot draw more than TDP between them.
  const double active_j = e.gpu_compute_j + e.gpu_memory_j + e.gpu_comm_j;
  const double most_j = active_w * step_us * 1e-6;
  if (active_j > most_j) {
    const double scale = most_j / active_j;
    e.gpu_compute_j *= scale, e.gpu_memory_j *= scale, e.gpu_comm_j *= scale;
  }
  e.node_j = p.node_overhead_w_per_gpu * step_us * 1e-6;
  e.facility_j = (e.gpu_j() + e.node_j) * (pue - 1);
  return e;
}

CarbonAccount carbon_account(const EnergyParts& e, double gpus, double steps, double gpu_hours,
                             double grid_g_per_kwh, const cost::CarbonParams& p) {
  constexpr double kJoulesPerKwh = 3.6e6;
  CarbonAccount a;
  const double n = gpus * steps / kJoulesPerKwh;
  a.gpu_kwh = e.gpu_j() * n;
  a.node_kwh = e.node_j * n;
  a.facility_kwh = e.facility_j * n;
  a.energy_kwh = a.gpu_kwh + a.node_kwh + a.facility_kwh;
  a.grid_g_per_kwh = grid_g_per_kwh;
  a.operational_kg = a.energy_kwh * grid_g_per_kwh / 1000.0;
  a.embodied_kg =
      (p.gpu_embodied_kg + p.server_embodied_kg_per_gpu) * gpu_hours / (p.lifetime_y * 8760.0);
  a.sci_kg = a.operational_kg + a.embodied_kg;
  return a;
}

}  // namespace lumos::carbon
