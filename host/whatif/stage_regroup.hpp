// Pipeline edits on the traced graph itself (Lumos §4.2, docs/design.md "Trace-driven
// what-ifs"): each traced stage's trace is cut into its pieces (the step's start, each
// micro-batch's embedding, layer instances and head, forward and backward, and the step's end
// with the optimizer), and the pieces are copied onto the ranks of the new stages: the layers
// split evenly, the embedding with the first stage, the head and loss with the last, the step's
// start and end on every stage (from the traced stage that held its first layer); with an
// interleaved schedule each stage holds several model chunks and runs their passes in the
// interleaved 1F1B order. The traced
// pipeline messages are dropped. Each stage's passes follow the 1F1B order of the traced
// micro-batches (model/pipeline_schedule.hpp); pipeline sends and receives are inserted between
// the stages (a CPU call, an arrival on a stream of their own, a rendezvous and a transfer the
// caller prices), and the receiving compute stream waits for the transfer. Inside a piece the
// traced dependencies are kept as they were; a piece's first work on a thread or stream follows
// the work copied before it there.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "whatif/layer_splice.hpp"

namespace lumos::whatif {

struct StageRegroupRequest {
  int traced_pp = 1, new_pp = 1;
  int new_interleave = 1;    // model chunks per new stage (the traced schedule is plain 1F1B)
  int64_t microbatches = 0;  // traced micro-batches per iteration (kept)
  double p2p_us = 0;         // one pipeline message's transfer, priced by the caller
  bool p2p_blocking = false;
  // An event call's CPU time per launch call's, for traces without event calls.
  double event_per_launch = 1;  // the compute stream waits for its sends (the stack's behaviour)
  // Per traced node: 1 when its time grows with the stage's parameters (the optimizer's
  // kernels), scaled by the new stage's parameters over those of the traced stage whose step
  // start and end it copies (the one that held its first layer); 1 for the traced pipeline
  // messages, which are dropped.
  std::vector<uint8_t> scales_with_params, pipeline_nodes;
  std::vector<double> traced_params_by_stage, new_params_by_stage;
};

struct StageRegroup {
  graph::Graph graph;
  std::string why_not;  // non-empty: the traced graph cannot express the regroup (and why)
  uint32_t pieces = 0, messages = 0, nodes_before = 0, nodes_after = 0, scaled = 0;
};

// Regroups the trace `g` of a 1F1B pipeline (one rank per stage, one step, a forward and a
// backward layer stretch per micro-batch on each, as find_layer_stretches finds them) into
// `new_pp` stages.
StageRegroup regroup_stages(const graph::Graph& g, const std::vector<LayerStretch>& stretches,
                            const StageRegroupRequest& req, const std::string& label);

}  // namespace lumos::whatif
