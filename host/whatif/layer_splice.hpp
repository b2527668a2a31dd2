// Layer edits on the traced graph itself (Lumos §4, docs/design.md "Trace-driven what-ifs"):
// whole traced layer instances are duplicated or removed, forward and backward, in every pass of
// every micro-batch, on every rank, with their CPU operators, launches, syncs and the work of the
// other streams they launched, and re-linked by the original dependency pattern.
//
// A layer instance is one repetition of the block of kernels that repeats on a rank's compute
// stream (find_repeats, as `lumos whatif --describe` finds the layers), plus the CPU work of the
// thread that launched it between its first launch and the next instance's first launch, plus
// the GPU work that CPU work launched, plus the collective rendezvous its ranks meet at. A copy
// of an instance takes its predecessors from the previous instance shifted by one (the previous
// copy, or the original for the first), and whatever followed the original follows the last
// copy. Removing instances links the instance before them to the one after.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace lumos::whatif {

// A stretch of back-to-back layer instances on one rank's compute stream: one pass of one model
// chunk of one micro-batch.
struct LayerStretch {
  int32_t rank = 0;
  int32_t step = -1;                   // index into Graph::steps
  uint32_t period = 0;                 // compute-stream kernels per instance
  uint32_t instances = 0;              // repetitions of the block
  double first_start_us = 0;           // measured start of its first kernel
  std::vector<graph::NodeId> kernels;  // instances x period compute-stream kernels, in order
};

// The layer stretches of every rank and step of a graph (each rank's compute stream: the stream
// with the most non-collective kernel time), in (rank, step, time) order. The search costs
// max_period x kernels per rank and step: a caller that knows the layer's period (from
// recognise_job) bounds it.
std::vector<LayerStretch> find_layer_stretches(const graph::Graph& g, uint32_t max_period = 4096);

// Splits every stretch into passes of `per_pass` instances (the passes of an interleaved
// schedule's chunks run back to back). False, leaving `stretches` as they were, when a stretch is
// not a whole number of passes or a pass would hold fewer than two instances.
bool split_passes(std::vector<LayerStretch>& stretches, uint32_t per_pass);

struct LayerSplice {
  graph::Graph graph;
  uint32_t stretches = 0;                              // edited stretches (ranks x passes)
  uint32_t instances_before = 0, instances_after = 0;  // summed over the edited stretches
  uint32_t nodes_added = 0, nodes_removed = 0;
};

// Adds `delta` instances to every stretch (removes -delta when negative). Throws InputError (one
// line, naming `label`) when the graph has no repeating layers, a stretch has fewer than two
// instances (a copy follows the instance before), or a stretch would keep fewer than one.
LayerSplice splice_layers(const graph::Graph& g, int delta, const std::string& label);
// The same with the graph's stretches already found (find_layer_stretches of g).
LayerSplice splice_layers(const graph::Graph& g, const std::vector<LayerStretch>& stretches,
                          int delta, const std::string& label);

}  // namespace lumos::whatif
