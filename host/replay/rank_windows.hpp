// Per rank: the breakdown and the GPU's idle split over that rank's steps' windows (a step's
// window runs from its marker's replayed start for its replayed time).
#pragma once
#include <vector>

#include "graph/graph.hpp"
#include "replay/gpu_idle.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"

namespace lumos::replay {

struct RankWindows {
  int32_t rank = 0;
  uint32_t steps = 0;
  Breakdown breakdown;  // summed over the rank's steps
  IdleSplit idle;
};

// `steps` are step_times(g, r) (or the same with another engine's replayed times), one per
// g.steps entry; ranks come out in increasing order.
std::vector<RankWindows> rank_windows(const graph::Graph& g, const ReplayResult& r,
                                      const std::vector<StepTime>& steps);

}  // namespace lumos::replay
