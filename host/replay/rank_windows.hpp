// Per rank: the breakdown and the GPU's idle split over that rank's steps' windows. A step's
// window runs from its marker's start for the step's time, cut where the rank's next step begins:
// a CPU that runs a step ahead of its GPU starts the next step while this one's kernels still
// run, and the time two steps share counts once, so the windows add up to the time the rank's
// steps cover.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "graph/graph.hpp"
#include "replay/gpu_idle.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"

namespace lumos::replay {

struct RankWindows {
  int32_t rank = 0;
  uint32_t steps = 0;
  Breakdown breakdown;  // summed over the rank's step windows
  IdleSplit idle;
};

struct StepWindow {
  int32_t rank = 0;
  double begin_us = 0, end_us = 0;  // end_us >= begin_us
};

// One window per g.steps entry: begins from `start_us` at each step's marker, lengths from
// `step_us` (one per step), each cut at the next begin of its rank.
std::vector<StepWindow> step_windows(const graph::Graph& g, const std::vector<double>& start_us,
                                     const std::vector<double>& step_us);

// Each rank's nodes (those of its steps, and those outside every step on its threads and
// streams) by their start, to hand each window the nodes that run in it.
class WindowNodes {
 public:
  WindowNodes(const graph::Graph& g, const std::vector<double>& start_us,
              const std::vector<double>& finish_us);
  // The nodes of `rank` that run in [begin_us, end_us), in start order.
  std::vector<graph::NodeId> in(int32_t rank, double begin_us, double end_us) const;

 private:
  struct Rank {
    std::vector<graph::NodeId> by_start;
    double longest_us = 0;
  };
  const std::vector<double>& start_us_;
  const std::vector<double>& finish_us_;
  std::map<int32_t, Rank> ranks_;
};

// `steps` are step_times(g, r) (or the same with another engine's replayed times), one per
// g.steps entry; ranks come out in increasing order.
std::vector<RankWindows> rank_windows(const graph::Graph& g, const ReplayResult& r,
                                      const std::vector<StepTime>& steps);

}  // namespace lumos::replay
