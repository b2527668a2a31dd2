// Energy of a replayed step. Today: one GPU's board energy over the step; the node, PUE and
// carbon accounting of DESIGN.md "Energy and carbon" grow here.
#pragma once
#include <vector>

#include "replay/batch_replay.hpp"

namespace lumos::cost {
struct GpuSpec;
}

namespace lumos::carbon {

// Idle power over the whole step plus the active increment (TDP - idle) while the GPU is busy
// (compute, communication or memory work; at most the step). Joules.
double gpu_step_energy_j(const cost::GpuSpec& gpu, double step_us, double busy_us);

// The same for every variant of a batch result; gpus[v] is variant v's GPU.
std::vector<double> gpu_step_energy_j(const replay::BatchResult& r,
                                      const std::vector<const cost::GpuSpec*>& gpus);

}  // namespace lumos::carbon
