#include "carbon/energy.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::carbon {

double gpu_step_energy_j(const cost::GpuSpec& gpu, double step_us, double busy_us) {
  return (gpu.idle_w * step_us + (gpu.tdp_w - gpu.idle_w) * std::min(busy_us, step_us)) * 1e-6;
}

std::vector<double> gpu_step_energy_j(const replay::BatchResult& r,
                                      const std::vector<const cost::GpuSpec*>& gpus) {
  LUMOS_EXPECT(gpus.size() == r.makespan_us.size(), "energy: one GPU per variant expected");
  std::vector<double> out(gpus.size());
  for (size_t v = 0; v < gpus.size(); ++v) {
    const double busy_us = r.busy_us[static_cast<int>(graph::NodeClass::kCompute)][v] +
                           r.busy_us[static_cast<int>(graph::NodeClass::kComm)][v] +
                           r.busy_us[static_cast<int>(graph::NodeClass::kMemory)][v];
    out[v] = gpu_step_energy_j(*gpus[v], r.makespan_us[v], busy_us);
  }
  return out;
}

}  // namespace lumos::carbon
