// The operations that took the most time in a replay: GPU ops (kernels, memcpy, memset) and CPU
// operators and runtime calls, summed by name over the nodes inside steps.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::replay {

struct OpTotal {
  std::string name;
  double total_us = 0;  // replayed time, summed over the op's nodes
  uint32_t count = 0;   // nodes of that name (a CPU operator split around its runtime calls
                        // counts once per part)
};

enum class OpSide { kGpu, kCpu };

// The `n` names with the most replayed time on one side, longest first (ties by name), over
// the nodes of steps (of rank `rank` only when rank >= 0).
std::vector<OpTotal> top_ops(const graph::Graph& g, const ReplayResult& r, OpSide side, size_t n,
                             int32_t rank = -1);

}  // namespace lumos::replay
