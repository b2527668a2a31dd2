// The execution graph of one Megatron training iteration, built from a model and a layout instead
// of a trace: one representative GPU per pipeline stage (the tensor, context and data parallel
// peers of a stage run the same kernels), each with a CPU thread that launches every kernel, a
// compute stream, a gradient stream, four pipeline streams and (FSDP) a parameter-gather stream.
// Pipeline messages are NCCL send/receive pairs that meet at a rendezvous, as in a multi-rank
// trace; gradient buckets are reduced on their own stream while the backward pass goes on; the
// iteration ends with the optimizer step and a stream synchronize. The graph has the same IR and
// semantics as a traced one, so the reference replay times it and the Kineto writer turns it into
// per-stage traces.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "graph/graph.hpp"
#include "model/model_spec.hpp"
#include "model/parallel_config.hpp"
#include "model/step_costs.hpp"

namespace lumos::model {

// Stream ids of a stage's GPU (as written into generated traces).
enum StreamRole : int {
  kComputeStream,
  kGradStream,
  kRecvFwd,
  kRecvBwd,
  kSendFwd,
  kSendBwd,
  kGatherStream,  // FSDP parameter all-gathers
  kTpStream       // tensor-parallel collectives overlapped with backward GEMMs
};
constexpr int kNumStreams = 8;
constexpr int64_t kStreamIds[kNumStreams] = {7, 20, 30, 31, 32, 33, 21, 22};
constexpr int64_t kThreadId = 1;

// A kernel kind of the iteration (docs/design.md "Variants and slots"): the priced op every node of
// the kind was built from, so that another configuration of the same structure (another GPU, a
// faster network) gives the kind's duration without building the graph again
// (model_slot_durations). Kernels of one kind have the same duration in every configuration.
// How a kernel kind draws power: matrix arithmetic (GEMMs, attention), memory-bound work (norms,
// activations, the optimizer), or communication (collectives, pipeline messages).
enum class PowerClass : uint8_t { kComputeBound, kMemoryBound, kComm };

struct ModelSlot {
  enum class Source : uint8_t {
    kLayerFwd,
    kLayerBwd,
    kLayerRecompute,
    kEmbedFwd,
    kEmbedBwd,
    kHeadFwd,
    kHeadBwd,
    kP2p,
    kEmbeddingAllreduce,
    kGradReduce,    // StepCosts::grad_reduce(params)
    kParamGather,   // StepCosts::param_gather(params)
    kOptimizer,     // StepCosts::optimizer(params)
    kFolded,        // a folded run of layers (LayerFold): the entry (from, to) of its matrix
    kFoldedPeriods  // folded steady-state micro-batches (MicrobatchFold): an entry of its matrix
  };
  Source source = Source::kLayerFwd;
  uint32_t index = 0;  // in its StepCosts list; kFolded: the fold
  // Of a gradient reduction, parameter gather or optimizer step; kFolded: from * kFrontier + to;
  // kFoldedPeriods: from * (the fold's inputs) + to.
  double params = 0;
  bool operator<(const ModelSlot& o) const {
    return std::tie(source, index, params) < std::tie(o.source, o.index, o.params);
  }
};

// A collective kernel's NCCL arguments.
struct CommRecord {
  std::string process_group;  // unique per stage (and per stage pair for pipeline messages)
  int64_t seq = 0;
  std::string collective;  // Kineto's "Collective name": allreduce, allgather, send, recv, ...
  int64_t in_nelems = 0, out_nelems = 0;
  int group_size = 1;
  std::string dtype;
};

// A run of identical layers folded into a few nodes (build_step_graph's fold_layers). What a
// stage's next op depends on is its frontier: the last call on its CPU thread, the last op on its
// compute and tensor-parallel streams, and the event waits queued for each stream. One layer maps
// the frontier before it to the frontier after it max-plus linearly (each entry after is the
// latest of the entries before, each plus the longest path between them), so L layers are the
// L-th max-plus power of that matrix, and a folded run replays exactly as its layers do. The
// layer is kept as a small graph so that every configuration of the structure computes its own
// matrix from its kernels' durations (fold_slot_durations).
struct LayerFold {
  static constexpr int kFrontier = 5;  // thread, compute stream, TP stream, waits on each stream
  struct Node {
    int32_t slot = -1;  // a model slot, or -1: dur_us, scaled by its class's speed
    double dur_us = 0;
    uint8_t cls = 0;  // graph::NodeClass
  };
  // One layer in build order (a topological order); nodes[0, kFrontier) stand for the frontier
  // before it. In-edges of node n: [edge_begin[n], edge_begin[n + 1]) of edge_src / edge_lag_us.
  std::vector<Node> nodes;
  std::vector<uint32_t> edge_begin, edge_src;
  std::vector<double> edge_lag_us;
  // Frontier entry j after the layer: the latest finish of these nodes (none: no such entry).
  std::array<std::vector<uint32_t>, kFrontier> outputs;
  int64_t layers = 0;  // the run's length
};

// The steady state of a pipeline schedule folded (build_step_graph's fold_layers; see
// docs/design.md "Model graphs"). With every micro-batch's work the same, 1F1B and interleaved
// 1F1B repeat one period (a forward and a backward per stage, or p x v of them interleaved) on
// every stage; the state a period leaves to the next (the nodes later work reads) maps max-plus
// linearly to the state after the next, so n periods are that matrix's n-th max-plus power. The
// graph keeps the warm-up, two periods and the cool-down, and a node per matrix entry that some
// path joins; the period is kept as a small graph so that every configuration of the structure
// computes its own matrix (fold_slot_durations).
struct MicrobatchFold {
  // One period in a topological order; nodes[0, inputs) stand for the state before it. In-edges
  // of node n: [edge_begin[n], edge_begin[n + 1]) of edge_src / edge_lag_us.
  std::vector<LayerFold::Node> nodes;
  std::vector<uint32_t> edge_begin, edge_src;
  std::vector<double> edge_lag_us;
  uint32_t inputs = 0;
  // Per state entry: the node whose finish is the entry after the period.
  std::vector<uint32_t> outputs;
  int64_t periods = 0;  // folded into the matrix's power
  // Per slot: the kernels one period adds to StepGraph::compute_kernels and gpu_kernels (so that
  // the graph serves another count of periods: sweep/graph_reuse.hpp).
  std::vector<uint64_t> period_compute_kernels, period_gpu_kernels;
};

struct StepGraph {
  graph::Graph graph;
  int stages = 1;
  std::vector<int32_t> stage_rank;  // global rank of each stage's representative GPU
  int32_t world_size = 1;
  int gpus_per_node = 8;
  // Per graph node: what the Kineto writer and the report need beyond the IR.
  // Launch, synchronize and transfer links are edges of the graph (kLaunch, kGpuToCpuSync,
  // kIntraStream after a kCrossRank rendezvous).
  struct NodeMeta {
    double model_flops = 0, hw_flops = 0;
    int32_t stage = -1;   // -1 for rendezvous nodes and the origin
    int32_t comm = -1;    // collective kernel (p2p: its arrival) -> comms index
    int8_t stream = -1;   // StreamRole of GPU nodes
    int8_t waits_on = 0;  // cudaStreamWaitEvent call: (to << 4) | from stream roles, else 0
    uint32_t record = 0;  // cudaStreamWaitEvent call: build index of its cudaEventRecord call
    bool sync = false;    // the final cudaStreamSynchronize
    int32_t gemm = -1;    // GEMM kernel -> gemms index (its shape)
    int32_t slot = -1;    // GPU kernel with a duration -> slots index (its kernel kind)
  };
  std::vector<NodeMeta> meta;         // in build order; see meta_of
  std::vector<uint32_t> build_index;  // graph node -> index into meta
  const NodeMeta& meta_of(graph::NodeId n) const { return meta[build_index[n]]; }
  std::vector<CommRecord> comms;
  std::vector<cost::GemmQuery> gemms;    // distinct GEMM shapes, for the Kineto writer
  std::vector<graph::NodeId> stage_end;  // per stage: its final stream synchronize
  std::vector<ModelSlot> slots;          // the kernel kinds; NodeMeta::slot indexes them
  std::vector<uint8_t> slot_class;       // per slot: its kernels' graph::NodeClass
  // Per slot: how many kernels of the kind the stages' compute streams run in the iteration
  // (folded layers counted as the layers they stand for), so their busy time is the sum of
  // count x duration.
  std::vector<uint64_t> compute_kernels;
  // Per slot: the same over every GPU stream, and how its kernels draw power (carbon/energy).
  std::vector<uint64_t> gpu_kernels;
  std::vector<PowerClass> slot_power;
  // Per slot: the ParamPlan site whose parameter count sizes it (ParamPlan::kNoSite: a kind not
  // sized by parameters), so that another configuration of the shape prices it (slot_params).
  std::vector<uint32_t> slot_site;
  std::vector<LayerFold> folds;                  // ModelSlot::kFolded's index
  std::vector<MicrobatchFold> microbatch_folds;  // ModelSlot::kFoldedPeriods's index
  // Per graph node: its slot, or replay::VariantBatch::kNoSlot (CPU calls, arrivals, the
  // origin: durations no configuration of the structure changes).
  std::vector<uint32_t> node_slots() const;
  // node_slots as the build left them (written in build order: read through build_index, each
  // node's meta missed the cache, for every batch of a sweep that takes the graph); empty for a
  // graph made otherwise.
  std::vector<uint32_t> node_slot;
};

// Per node class: the factor its kernels run faster by (2 = twice as fast).
using ClassSpeeds = std::array<float, 5>;  // by graph::NodeClass
constexpr ClassSpeeds kUnitSpeeds = {1, 1, 1, 1, 1};

// The duration of every slot of `g` under `costs`: the costs of another configuration with the
// same structure (same_structure), each kernel kind divided by its class's speed and each fold's
// matrix computed from them (fold_slot_durations). `params` (per slot, from slot_params): that
// configuration's parameter counts of the slots sized by them; none: the graph's own. Throws
// InputError when a slot is not in `costs`.
std::vector<double> model_slot_durations(const StepGraph& g, const StepCosts& costs,
                                         const ClassSpeeds& speed = kUnitSpeeds,
                                         const std::vector<double>* params = nullptr);

// Fills the kFolded slots of `slot_us` from its other slots: each fold's layer is replayed from
// each frontier entry (nodes without a slot take their duration over their class's speed) and
// its matrix raised to the run's length; then the kFoldedPeriods slots, the same way from the
// period of a MicrobatchFold.
void fold_slot_durations(const StepGraph& g, const ClassSpeeds& speed,
                         std::vector<double>* slot_us);

// The busy time of the stages' compute streams, summed over stages, given every slot's duration.
double compute_busy_us(const StepGraph& g, const std::vector<double>& slot_us);

// The stages' GPU kernel time by how it draws power, summed over stages (kernels on different
// streams that overlap both count).
struct KernelBusy {
  double compute_bound_us = 0, memory_bound_us = 0, comm_us = 0;
};
KernelBusy kernel_busy_us(const StepGraph& g, const std::vector<double>& slot_us);

// Whether a graph built from `a` and one built from `b` (same model and pipeline layout, plans of
// the same shape: same_param_shape) have the same nodes, edges and lags, so that only the slots'
// durations differ: the same ops in the same order with the same streams and flags, the same host
// constants, whether gradients are reduced and the optimizer distributed. Sizes, FLOPs and
// degrees may differ: what only a written trace reads (NCCL records, GEMM shapes, FLOPs per
// node) is then the built configuration's.
bool same_structure(const StepCosts& a, const StepCosts& b);

// The largest graph an estimate builds.
constexpr uint64_t kMaxStepGraphNodes = graph::kMaxBuiltNodes;

// Throws InputError when the iteration would exceed `max_nodes` graph nodes. With
// `fold_layers`, runs of identical layers (those between which nothing else happens: not the
// first forward that waits for the distributed optimizer's gathers, not the backward that fills
// gradient buckets, not FSDP) become LayerFolds: the graph gives the same step time and busy
// times for a fraction of the nodes, but holds no per-layer kernels to write or report (and no
// NCCL records or GEMM shapes, which only a written trace needs). A schedule with more than a
// few periods in its steady state is also folded there (MicrobatchFold), so the graph's size does
// not grow with the number of micro-batches.
// What a counting pass of the builder found (count_step_graph).
struct StepGraphCount {
  uint64_t nodes = 0, edges = 0;
  uint64_t layer_nodes = 0, layer_edges = 0;  // the largest layer recorded for a fold
  // A schedule whose steady state folds is counted by building it (small as it is): the graph
  // built, which the first build_step_graph given this count takes instead of building it again
  // (half of a sweep's build time was that second build).
  mutable std::shared_ptr<StepGraph> built;
};

// Micro-batches one period of the steady state adds (1 with 1F1B, p interleaved), and whether
// `microbatches` of them make enough periods that a folded build folds them (MicrobatchFold;
// never where output-layer weight gradients are deferred: the first micro-batches differ).
int64_t microbatches_per_period(const ParallelConfig& c);
bool folds_microbatches(const ParallelConfig& c, int64_t microbatches);

// `counted`: this layout's count_step_graph (same costs' structure and folding), which the
// build then need not count again.
StepGraph build_step_graph(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                           const StepCosts& costs, uint64_t max_nodes = kMaxStepGraphNodes,
                           bool fold_layers = false, const StepGraphCount* counted = nullptr);

// Nodes the graph of this layout has, counted by a dry run of the code that builds it (no graph
// is allocated); with `fold_layers`, at most that many (a schedule whose steady state folds is
// built, small as it is, and its nodes counted). Counting stops once it passes
// `stop_above` and returns stop_above + 1.
uint64_t step_graph_size(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                         const StepCosts& costs,
                         uint64_t stop_above = std::numeric_limits<uint64_t>::max() - 1,
                         bool fold_layers = false);
// The same count, with what a build reserves.
StepGraphCount count_step_graph(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                                const StepCosts& costs, uint64_t stop_above, bool fold_layers);

}  // namespace lumos::model
