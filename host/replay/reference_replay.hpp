// The reference replay: an event-driven simulation with Lumos's semantics (Algorithm 1). Each
// CPU thread and CUDA stream is a serial processor; a node starts when its processor is free
// and every predecessor has finished plus the edge's lag. It is the simplest correct replay and
// the one every faster engine is tested against.
#pragma once
#include <vector>

#include "graph/graph.hpp"

namespace lumos::replay {

struct ReplayResult {
  std::vector<double> start_us;  // per node, relative to the graph's t0
  std::vector<double> finish_us;
  double makespan_us = 0;  // latest finish
};

// Replays g with its own durations, or with `dur_us` when given (same size as the graph).
// `release_us`, when given, is an earliest start per node set by something outside the graph
// (the peers of a collective in a single-rank replay); -inf for none.
ReplayResult reference_replay(const graph::Graph& g, const std::vector<double>* dur_us = nullptr,
                              const std::vector<double>* release_us = nullptr);

// The same with a precomputed successor view (for repeated replays of one graph).
ReplayResult reference_replay(const graph::Graph& g, const graph::Successors& succ,
                              const std::vector<double>* dur_us = nullptr,
                              const std::vector<double>* release_us = nullptr);

}  // namespace lumos::replay
