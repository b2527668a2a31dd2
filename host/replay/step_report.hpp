// What `lumos replay` reports: per-step measured vs replayed iteration time, the execution
// breakdown (lumos.md §5) and busy time per stream.
#pragma once
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::replay {

struct StepTime {
  std::string name;
  int32_t rank = 0;
  double measured_us = 0;
  double replayed_us = 0;
  double error_pct = 0;  // (replayed - measured) / measured * 100
};

// Exposed compute: compute not overlapped with communication; overlapped: both at once;
// exposed communication: communication alone; other: no GPU work (mostly idle). Compute includes
// memcpy and memset. In a pipelined model-driven estimate, a stage's idle time is the pipeline
// bubble instead of "other". The five add up to the window length.
struct Breakdown {
  double window_us = 0;
  double exposed_compute_us = 0;
  double overlapped_us = 0;
  double exposed_comm_us = 0;
  double bubble_us = 0;
  double other_us = 0;

  Breakdown& operator+=(const Breakdown& b);
  Breakdown scaled(double k) const;  // every field times k (for weighted means)
};

struct StreamBusy {
  int64_t device = 0;
  int64_t stream = 0;
  double busy_us = 0;
  uint32_t ops = 0;
};

// Step times from a replay of the whole-trace graph.
std::vector<StepTime> step_times(const graph::Graph& g, const ReplayResult& r);

// Breakdown over [begin, end) from per-node start and finish; nodes outside `step` are ignored
// unless step < 0.
Breakdown breakdown(const graph::Graph& g, const std::vector<double>& start_us,
                    const std::vector<double>& finish_us, int32_t step, double begin_us,
                    double end_us);

// The same over a given set of nodes (for example one pipeline stage's GPU ops).
Breakdown breakdown(const graph::Graph& g, const std::vector<double>& start_us,
                    const std::vector<double>& finish_us, const std::vector<graph::NodeId>& nodes,
                    double begin_us, double end_us);

std::vector<StreamBusy> stream_busy(const graph::Graph& g, const ReplayResult& r);

}  // namespace lumos::replay
