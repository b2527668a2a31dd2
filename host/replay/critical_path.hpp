// The critical path of a replay.
//
// Two conventions:
//  - kHtaWeights (default): HTA's lightweight critical path. The longest path where work counts
//    (node durations, launch delays, kernel-to-kernel gaps) and waiting does not (CPU gaps
//    between top-level operators, the blocked part of a sync call, sync edges weigh zero).
//    This is what HTA's critical_path_analysis reports, so users can compare the two tools.
//  - kTiming: from the node that finishes last, back through the predecessor that set each
//    start in the replay: the chain that determines the step time, gaps included.
#pragma once
#include <vector>

#include "graph/graph.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::replay {

enum class CriticalPathMode { kHtaWeights, kTiming };

struct CriticalPath {
  CriticalPathMode mode = CriticalPathMode::kHtaWeights;
  std::vector<graph::NodeId> nodes;  // in time order, origin excluded
  double length_us = 0;              // replayed span: finish of the last node - start of the first
  double weight_us = 0;              // sum of the weights along the path (mode's convention)
  double by_class_us[5] = {};        // path time per graph::NodeClass: each node until the next
                                     // starts (with lag_us, the length, starts in order)
  double lag_us = 0;                 // time on the path's edges (launch delays, gaps)
};

// The path among the nodes of `step` (all nodes when step < 0).
CriticalPath critical_path(const graph::Graph& g, const ReplayResult& r, int32_t step = -1,
                           CriticalPathMode mode = CriticalPathMode::kHtaWeights);

}  // namespace lumos::replay
