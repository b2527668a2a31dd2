// The execution graph of one Megatron training iteration, built from a model and a layout instead
// of a trace: one representative GPU per pipeline stage (the tensor, context and data parallel
// peers of a stage run the same kernels), each with a CPU thread that launches every kernel, a
// compute stream, a gradient stream and four pipeline streams. Pipeline messages are NCCL
// send/receive pairs that meet at a rendezvous, as in a multi-rank trace; gradient buckets are
// reduced on their own stream while the backward pass goes on; the iteration ends with the
// optimizer step and a stream synchronize. The graph has the same IR and semantics as a traced
// one, so the reference replay times it and the Kineto writer turns it into per-stage traces.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"

namespace lumos::model {

// Stream ids of a stage's GPU (as written into generated traces).
enum StreamRole : int { kComputeStream, kGradStream, kRecvFwd, kRecvBwd, kSendFwd, kSendBwd };
constexpr int kNumStreams = 6;
constexpr int64_t kStreamIds[kNumStreams] = {7, 20, 30, 31, 32, 33};
constexpr int64_t kThreadId = 1;

// A collective kernel's NCCL arguments.
struct CommRecord {
  std::string process_group;  // unique per stage (and per stage pair for pipeline messages)
  int64_t seq = 0;
  std::string collective;  // Kineto's "Collective name": allreduce, allgather, send, recv, ...
  int64_t in_nelems = 0, out_nelems = 0;
  int group_size = 1;
  std::string dtype;
};

struct StepGraph {
  graph::Graph graph;
  int stages = 1;
  std::vector<int32_t> stage_rank;  // global rank of each stage's representative GPU
  int32_t world_size = 1;
  int gpus_per_node = 8;
  // Per graph node.
  std::vector<int32_t> node_stage;  // -1 for rendezvous nodes and the origin
  std::vector<int8_t> node_stream;  // StreamRole of GPU nodes, -1 for CPU and virtual nodes
  std::vector<double> model_flops, hw_flops;
  std::vector<graph::NodeId> launched_by;  // GPU node -> its launch call (origin if none)
  std::vector<graph::NodeId> transfer_of;  // p2p arrival -> its transfer node (origin if none)
  std::vector<int32_t> comm;               // collective kernel (p2p: arrival) -> comms index
  std::vector<graph::NodeId> record_of;    // cudaStreamWaitEvent call -> its cudaEventRecord
  std::vector<int8_t> waits_on;            // cudaStreamWaitEvent call: (to << 4) | from roles
  std::vector<graph::NodeId> synced;       // cudaStreamSynchronize call -> the GPU op it waits for
  std::vector<CommRecord> comms;
  std::vector<graph::NodeId> stage_end;  // per stage: its final stream synchronize
};

// Throws InputError when the iteration would exceed `max_nodes` graph nodes.
StepGraph build_step_graph(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                           const StepCosts& costs, uint64_t max_nodes = 60'000'000);

// Nodes the graph of this layout would have (for size checks before building).
uint64_t step_graph_size(const ParallelConfig& c, const Layout& l, const StepCosts& costs);

}  // namespace lumos::model
