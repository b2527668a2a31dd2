// What the CUDA backend's replay kernel (host/replay/lanes_thread.hpp) can reach on a GPU,
// projected from its instruction and memory-traffic counts (a roofline): the issue bound
// (instructions per node-variant against the GPU's warp-instruction rate), the shared-memory
// bound (the operands kept in shared memory and the slot factors, read through the SM's L1 /
// shared-memory path) and the global bound (the long-lived registers in device memory, from the
// L2 when a full GPU's share of them fits there, else from HBM). A projection, not a measurement:
// `lumos bench batch` prints it beside the measured rate, and scripts/device-check.sh measures the
// real one when a GPU is lent.
#pragma once
#include <string>

#include "cost/kernels_db.hpp"
#include "graph/graph.hpp"
#include "replay/replay_program.hpp"

namespace lumos::engine {

struct DeviceProjection {
  std::string gpu;
  bool critical_path = true;  // the kernel with the path's composition, or finish times alone
  double preds_per_node = 0;
  double instructions_per_node_variant = 0;  // PTX instructions of one lane per node
  // Those instructions in issue slots: FP64 arithmetic and conversions take more than one.
  double issue_slots_per_node_variant = 0;
  double thread_instructions_per_s = 0;  // the GPU's issue rate, all SMs
  double issue_bound = 0;                // node-variants/s
  // Occupancy: the registers a block keeps in shared memory, and the warps an SM then holds.
  uint32_t shared_registers = 0;
  double warps_per_sm = 0;
  double shared_bytes_per_node_variant = 0;  // operands in shared memory and slot factors
  double shared_bytes_per_s = 0;
  double shared_bound = 0;
  double state_bytes_per_node_variant = 0;  // operands in global memory
  double resident_state_bytes = 0;          // global state of the lanes resident at once
  std::string state_level;                  // "L2" or "HBM": where that state lives
  double state_bytes_per_s = 0;
  double state_bound = 0;
  double projected = 0;  // min of the three bounds
  std::string limit;     // "issue", "shared" or "state"
};

// The projection for replaying `program` (compiled from `g`) on `gpu`.
DeviceProjection project_device_replay(const graph::Graph& g, const replay::ReplayProgram& program,
                                       const cost::GpuSpec& gpu, bool critical_path = true);

}  // namespace lumos::engine
