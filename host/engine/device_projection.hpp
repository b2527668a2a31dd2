// What the CUDA backend's replay kernel can reach on a GPU, projected from its instruction and
// state-traffic counts (a roofline): the issue bound (instructions per node-variant against the
// GPU's warp-instruction rate) and the state bound (bytes per node-variant against the bandwidth
// of the memory level that holds the in-flight state). A projection, not a measurement:
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
  double preds_per_node = 0;
  double instructions_per_node_variant = 0;  // PTX instructions of one thread per node
  double thread_instructions_per_s = 0;      // the GPU's issue rate, all SMs
  double issue_bound = 0;                    // node-variants/s
  double state_bytes_per_node_variant = 0;
  double resident_state_bytes = 0;  // state of the variants resident at once (a full GPU)
  std::string state_level;          // "L2" or "HBM": where that state lives
  double state_bytes_per_s = 0;
  double state_bound = 0;  // node-variants/s
  double projected = 0;    // min of the two bounds
  std::string limit;       // "issue" or "state"
};

// The projection for replaying `program` (compiled from `g`) on `gpu`.
DeviceProjection project_device_replay(const graph::Graph& g, const replay::ReplayProgram& program,
                                       const cost::GpuSpec& gpu);

}  // namespace lumos::engine
