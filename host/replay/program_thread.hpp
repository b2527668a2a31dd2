// One variant's replay of a program, as a GPU thread runs it: the body of the CUDA backend's
// kernel, `__host__ __device__` under nvcc and plain C++ otherwise, so the CPU launcher
// (common/launch.hpp) runs the very same code in ctest on machines without a GPU. Thread v of a
// tile replays variant v0 + v over its own registers (a [register][width] plane, coalesced
// across the threads of a warp) and writes the makespan, the critical path's composition and
// each step's duration.
#pragma once
#include <cstdint>

#include "common/hd.hpp"
#include "replay/batch_update.hpp"
#include "replay/slot_table.hpp"

namespace lumos::replay {

// A program (replay_program.hpp) as raw arrays.
struct ProgramView {
  uint32_t nodes = 0;
  const uint32_t* order = nullptr;   // [instruction]: node
  const uint32_t* dst = nullptr;     // [node]: register
  const uint32_t* op_reg = nullptr;  // [edge]: register of the predecessor
  const uint8_t* may_end = nullptr;  // [node]
  const uint8_t* may_end_step = nullptr;
  const uint32_t* marks_offset = nullptr;  // [node + 1]
  const uint32_t* marks_step = nullptr;
  const int32_t* step_of = nullptr;  // [node]: graph step, -1 outside every step
  uint32_t steps = 0;
};

// One variant's factor for the node at hand.
struct ConstantFactor {
  double f;
  LUMOS_HD double operator()(uint32_t) const { return f; }
};

// Below every finish time: the end of a step none of whose nodes has finished yet.
constexpr double kNoFinish = -1e300;

struct ProgramThread {
  BatchGraphView graph;
  ProgramView program;
  SlotView slots;
  uint32_t v0 = 0;                 // absolute index of the tile's first variant
  BatchState state;                // [register][width]; stride = the tile's width
  double* step_us = nullptr;       // [step][width]: the step's end, then its duration
  double* step_begin = nullptr;    // [step][width]
  double* makespan_us = nullptr;   // [width]
  float* cp_compute_us = nullptr;  // [width]
  float* cp_comm_us = nullptr;     // [width]

  LUMOS_HD void operator()(uint32_t v) const {
    const uint64_t w = state.stride;
    for (uint32_t k = 0; k < program.steps; ++k) step_us[k * w + v] = kNoFinish;
    double end = kNoFinish;
    float end_compute = 0, end_comm = 0;
    for (uint32_t i = 0; i < program.nodes; ++i) {
      const uint32_t n = program.order[i];
      const uint32_t reg = program.dst[n];
      const double factor = slots.factor(slots.node_slot[n], v0 + v);
      batch_node_lanes<1>(graph, state, n, v, ConstantFactor{factor}, program.op_reg, reg);
      const uint64_t at = static_cast<uint64_t>(reg) * w + v;
      const double f = state.finish_us[at];
      if (program.may_end[n] && f > end)
        end = f, end_compute = state.cp_compute_us[at], end_comm = state.cp_comm_us[at];
      const int32_t k = program.step_of[n];
      if (k >= 0 && program.may_end_step[n]) {
        double& se = step_us[static_cast<uint64_t>(k) * w + v];
        se = f > se ? f : se;
      }
      for (uint32_t m = program.marks_offset[n]; m < program.marks_offset[n + 1]; ++m)
        batch_node_start(graph, state, n, v, v + 1, program.op_reg,
                         step_begin + static_cast<uint64_t>(program.marks_step[m]) * w);
    }
    makespan_us[v] = end;
    cp_compute_us[v] = end_compute;
    cp_comm_us[v] = end_comm;
    for (uint32_t k = 0; k < program.steps; ++k) {
      double& se = step_us[static_cast<uint64_t>(k) * w + v];
      se = se <= kNoFinish ? 0.0 : se - step_begin[static_cast<uint64_t>(k) * w + v];
    }
  }
};

}  // namespace lumos::replay
