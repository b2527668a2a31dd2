// `lumos whatif`: a traced step replayed under a grid of variants at once (other GPUs, per-class
// speed-ups) after edits of its structure (another data-parallel degree or network), with GEMMs
// repriced per GPU by the cost model on every backend, each variant's GPU energy, and the Pareto
// front over step time and energy.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "graph/load_input.hpp"
#include "whatif/collective_edit.hpp"
#include "whatif/grid.hpp"
#include "whatif/job_structure.hpp"

namespace lumos::estimate {

struct WhatifRequest {
  std::string traced_gpu;         // "" = the trace's deviceProperties, else h100
  std::vector<std::string> gpus;  // empty = the traced GPU
  std::string speed;              // grid axes, "" for none
  engine::Backend backend = engine::Backend::kAuto;
  // Edits of the traced job before the grid runs (whatif/collective_edit.hpp).
  int dp = 0;                   // new data-parallel degree, 0 = as traced
  std::string traced_topology;  // "" = the traced GPU's default in kernels_db
  std::string topology;         // "" = the traced topology
  double nic_gbps = 0;          // > 0: the NIC line rate of the network priced on
  whatif::JobHints hints;       // what the user says the traced job is (--traced, --group)
  ProgressFn progress;          // variants replayed of the grid (common/progress.hpp)
  bool edits() const { return dp > 0 || !topology.empty() || nic_gbps > 0; }
};

struct WhatifAnswer {
  std::string traced_gpu;
  whatif::Grid grid;
  uint32_t gemm_kernels_priced = 0;  // GEMM nodes repriced by the cost model per variant GPU
  // Set when a variant runs on another GPU but the input (a .lgraph file) has no kernel names or
  // shapes: its kernels then scale by class only (peak, HBM, NVLink ratios).
  std::string unpriced_warning;
  replay::BatchResult result;
  // [variant]: the replayed step as `lumos replay` reports it (each rank's mean over its steps,
  // the slowest rank's; the whole replay where the input marks no step)
  std::vector<double> step_us;
  // [variant]: compute and communication on the replay's critical path, pro-rated to one step
  // (x step_us / the replay's span)
  std::vector<double> cp_compute_us, cp_comm_us;
  // [variant]: one GPU over one replayed step (carbon/trace_energy.hpp: idle power and each kernel
  // class's draw, capped at TDP; GPU only, no node or PUE)
  std::vector<double> energy_j;
  std::vector<bool> on_front;  // [variant]: Pareto-optimal in (step time, energy)
  // With edits: what changed, and the unedited job's replayed step (as step_us) for comparison.
  std::vector<whatif::EditLine> edits;
  double unedited_us = 0;
  whatif::JobStructure structure;  // filled when edits were asked
};

// The GPU the traces ran on, in kernels_db: `given` when not empty, else the traces'
// deviceProperties, else h100. InputError for a GPU kernels_db does not describe.
std::string traced_gpu_of(const graph::LoadedInput& in, const std::string& given,
                          const cost::KernelsDb& db);

// The job the input traces show (`lumos whatif --describe`), with the user's word over the
// trace's where given. InputError for a .lgraph input and as whatif::recognise_job.
whatif::JobStructure describe_job(const graph::LoadedInput& in, const cost::KernelsDb& db,
                                  const whatif::JobHints& hints = {});

// Throws InputError for an unknown GPU, a bad axis or a grid too large, and for an edit the
// traced job lacks the structure for.
WhatifAnswer run_whatif(const graph::LoadedInput& in, const WhatifRequest& req,
                        const cost::KernelsDb& db);

}  // namespace lumos::estimate
