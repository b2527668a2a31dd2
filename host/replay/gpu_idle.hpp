// Why the GPU was idle: the idle part of a step's window (no kernel, memcpy or memset running, the
// breakdown's "other") split by what the first GPU op after each idle gap waited for. Each gap
// goes whole to one cause, so the four parts add up to the idle time (docs/design.md, "Replay
// engines").
#pragma once
#include <cstdint>
#include <vector>

#include "graph/graph.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::replay {

struct IdleSplit {
  double idle_us = 0;        // the whole idle time of the window
  double host_us = 0;        // the next op waited for the CPU to launch it
  double sync_us = 0;        // the launching CPU thread was blocked in a synchronization first
  double dependency_us = 0;  // the next op waited for another stream's op or a peer rank
  double truly_idle_us = 0;  // nothing held the next op but its recorded gap, or none came
  uint32_t gaps = 0;

  IdleSplit& operator+=(const IdleSplit& o);
};

// The split over [begin_us, end_us) for the GPU ops of `nodes`.
IdleSplit gpu_idle_split(const graph::Graph& g, const ReplayResult& r,
                         const std::vector<graph::NodeId>& nodes, double begin_us, double end_us);

}  // namespace lumos::replay
