// Energy of a training step and what it emits. A GPU draws its idle power all step, plus, while
// a kernel runs, a share of (TDP - idle) that depends on how the kernel draws power (matrix
// arithmetic, memory-bound work, communication; kernels_db/carbon.json), never above TDP; the
// rest of the node draws a constant overhead per GPU; the facility multiplies it all by its PUE.
#pragma once

namespace lumos::cost {
struct GpuSpec;
struct CarbonParams;
}  // namespace lumos::cost

namespace lumos::carbon {

// One GPU's energy over one step, by part (joules). IT = GPU + node; facility = IT x (PUE - 1).
struct EnergyParts {
  double gpu_idle_j = 0, gpu_compute_j = 0, gpu_memory_j = 0, gpu_comm_j = 0;
  double node_j = 0, facility_j = 0;
  double gpu_j() const { return gpu_idle_j + gpu_compute_j + gpu_memory_j + gpu_comm_j; }
  double total_j() const { return gpu_j() + node_j + facility_j; }
};

// Busy times are one GPU's over the step (kernels on different streams that overlap both
// count; the active draw is capped at TDP over the step).
EnergyParts step_energy(const cost::GpuSpec& gpu, const cost::CarbonParams& p, double pue,
                        double step_us, double compute_bound_us, double memory_bound_us,
                        double comm_us);

// A run's energy and carbon: `steps` steps on `gpus` GPUs, each step's energy per GPU `e`.
struct CarbonAccount {
  double gpu_kwh = 0, node_kwh = 0, facility_kwh = 0;
  double energy_kwh = 0;  // the sum of the three
  double grid_g_per_kwh = 0;
  double operational_kg = 0;  // energy x grid intensity
  // The GPUs' and their servers' embodied carbon, linear over the lifetime, for the GPU-hours
  // used: SCI's M term, reported beside the operational carbon, never added into it.
  double embodied_kg = 0;
  double sci_kg = 0;  // operational + embodied (per run)
};
CarbonAccount carbon_account(const EnergyParts& e, double gpus, double steps, double gpu_hours,
                             double grid_g_per_kwh, const cost::CarbonParams& p);

}  // namespace lumos::carbon
