// Builds the execution graph of a trace (all of it, or one ProfilerStep) with Lumos's four
// dependency classes and lags that keep the measured gaps.
//
// Each node gets an effective measured start S' and a duration; for each node the predecessor
// that explains S' best (largest finish + expected lag) keeps the measured gap as its lag, and
// every other predecessor gets min(expected lag, slack). Replaying the unmodified graph therefore
// reproduces the trace, while a change of duration moves exactly what waited on it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "trace/event_table.hpp"

namespace lumos::graph {

// A ProfilerStep#N annotation and the window of trace time that belongs to it.
struct TraceStep {
  std::string name;
  int64_t number = -1;   // N of ProfilerStep#N
  int64_t begin_ns = 0;  // annotation start
  int64_t end_ns = 0;    // window end: next step's start, or this annotation's end for the last
  int64_t pid = 0, tid = 0;
  uint32_t event = 0;
};

// ProfilerStep annotations in time order (empty when the trace has none).
std::vector<TraceStep> find_steps(const trace::EventTable& t);

struct BuildOptions {
  int window_step = -1;  // index into find_steps(); -1 builds the whole trace
  // A CPU node after a gap of at least this many µs on its thread may be woken by another thread
  // whose work ended at most inter_thread_window_us before it (Lumos's inter-thread class).
  double inter_thread_min_gap_us = 50;
  double inter_thread_window_us = 2000;
  // GPU ops ending at most this much after a sync call returns are still its dependencies
  // (CPU and GPU timestamps are rounded to 1 µs in older traces).
  double sync_tolerance_us = 1;
  // Also build what whatif::transplant needs (BuildResult::keys, free_edges, resource_free);
  // other builds skip the work and the memory.
  bool transplant_data = false;
};

// Identifies a node across two builds of one trace (for transplanting step N onto step M).
// CPU work inside a top-level operator is counted within that operator, so that a varying
// number of polling calls (cudaEventQuery) in one operator does not shift every later match.
struct MatchKey {
  uint8_t resource_kind = 0;
  int64_t a = 0, b = 0;            // (pid, tid) or (device, stream)
  uint32_t parent = UINT32_MAX;    // name of the enclosing top-level operator, if any
  uint32_t parent_occurrence = 0;  // which occurrence of that operator on this thread
  uint32_t name = 0;
  uint32_t piece = 0;       // which piece of a CPU op split around its runtime calls
  uint32_t occurrence = 0;  // k-th node with this name and piece (within the parent)
  bool operator==(const MatchKey& o) const {
    return resource_kind == o.resource_kind && a == o.a && b == o.b && parent == o.parent &&
           parent_occurrence == o.parent_occurrence && name == o.name && piece == o.piece &&
           occurrence == o.occurrence;
  }
};

// "Resource free" edge of a one-step graph: the origin edge into a resource's first node.
// lag = (free_ns - t0_ns)/1000 + chain_lag_us, so another step's initial conditions can be set.
struct FreeEdge {
  NodeId node = 0;
  uint8_t resource_kind = 0;
  int64_t a = 0, b = 0;
  double chain_lag_us = 0;
};

// How far a GPU op may start before its launch call before the clocks are called inconsistent:
// CUPTI's GPU timestamps are converted to the CPU clock with a few microseconds of error.
constexpr int64_t kClockToleranceNs = 50'000;

struct BuildStats {
  uint64_t gpu_ops_without_launch = 0;  // launched before profiling began
  // GPU ops that start more than kClockToleranceNs before their launch call starts (the CPU and
  // GPU clocks of the trace disagree), and the largest such lead.
  uint64_t gpu_ops_before_launch = 0;
  double max_before_launch_us = 0;
  uint64_t edges_by_kind[kNumEdgeKinds] = {};
  double launch_latency_us = 0;  // expected lag of a launch edge (median when the stream was idle)
  double kernel_gap_us = 0;      // expected lag between busy-stream kernels (median)
};

// When a resource of a one-step graph became free: the end of its last activity that does not
// belong to the step (for streams, GPU work launched before the step: the backlog it carries).
struct ResourceFree {
  uint8_t resource_kind = 0;
  int64_t a = 0, b = 0;
  int64_t free_ns = 0;
};

struct BuildResult {
  Graph graph;
  BuildStats stats;
  // With BuildOptions::transplant_data only (empty otherwise):
  std::vector<ResourceFree> resource_free;  // one-step builds only
  std::vector<MatchKey> keys;  // per node of graph (origin included, with a default key)
  std::vector<FreeEdge> free_edges;
};

// Throws InputError for a trace whose dependencies form a cycle or that has no nodes in the
// requested step.
BuildResult build_graph(const trace::EventTable& t, const BuildOptions& opt = {});

}  // namespace lumos::graph
