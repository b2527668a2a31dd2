// `lumos whatif`: a traced step replayed under a grid of variants at once (other GPUs, per-class
// speed-ups), with GEMMs repriced per GPU by the cost model on every backend, each variant's GPU
// energy, and the Pareto front over step time and energy.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "graph/load_input.hpp"
#include "whatif/grid.hpp"

namespace lumos::estimate {

struct WhatifRequest {
  std::string traced_gpu;         // "" = the trace's deviceProperties, else h100
  std::vector<std::string> gpus;  // empty = the traced GPU
  std::string speed;              // grid axes, "" for none
  engine::Backend backend = engine::Backend::kAuto;
};

struct WhatifAnswer {
  std::string traced_gpu;
  whatif::Grid grid;
  uint32_t gemm_kernels_priced = 0;  // GEMM nodes repriced by the cost model per variant GPU
  replay::BatchResult result;
  std::vector<double> energy_j;  // [variant]: one GPU over the replayed step
  std::vector<bool> on_front;    // [variant]: Pareto-optimal in (step time, energy)
};

// Throws InputError for an unknown GPU, a bad axis or a grid too large.
WhatifAnswer run_whatif(const graph::LoadedInput& in, const WhatifRequest& req,
                        const cost::KernelsDb& db);

}  // namespace lumos::estimate
