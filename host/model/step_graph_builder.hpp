// The builder of a model-driven step graph (step_graph.hpp), shared by the files that implement
// it; only host/model includes this header. One class template runs both of the builder's passes
// (Pass): its members are defined by job in
//   step_graph.cpp         the passes themselves: count, build, finish, the public entry points
//   step_graph_emit.cpp    nodes and edges: runtime calls, launches, kernels, events, messages
//   layer_fold.cpp         runs of identical layers folded into max-plus matrices (LayerFold)
//   microbatch_fold.cpp    the schedule's steady state folded into a max-plus matrix
//                          (MicrobatchFold)
//   training_schedule.cpp  a stage's iteration: 1F1B order, buckets, FSDP, optimizer
//   model_slots.cpp        which kernel kind each node names (ModelSlot) and the slots' durations
// A member one file defines and another calls is explicitly instantiated for both passes at the
// end of the file that defines it.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/flatten.hpp"
#include "model/param_plan.hpp"
#include "model/pipeline_schedule.hpp"
#include "model/step_graph.hpp"

namespace lumos::model::detail {

using graph::DraftEdge;
using graph::DraftNode;
using graph::EdgeKind;
using graph::NodeClass;
using graph::NodeKind;
using Src = ModelSlot::Source;

constexpr uint32_t kNone = 0;  // draft id 0 is the origin, never a real predecessor here
// Runtime call names. A call is told apart by its name's address (see Builder::cpu_call), so
// each is one object in every file.
inline const std::string kLaunchCall = "cudaLaunchKernel";
inline const std::string kRecordCall = "cudaEventRecord";
inline const std::string kWaitCall = "cudaStreamWaitEvent";
inline const std::string kSyncCall = "cudaStreamSynchronize";

// A recorded CUDA event: the call that recorded it and the GPU op it marks (the last one on its
// stream then).
struct Event {
  uint32_t call = kNone, src = kNone;
  int from = 0;
};

// Gradient buckets of one model chunk, filled in backward order (head, layers last to first,
// embedding), each reduced as soon as it is complete (where ParamPlan closes it).
struct Buckets {
  uint32_t terms = 0;   // of the chunk's backward done (head, layers, the final flush)
  uint32_t closed = 0;  // buckets reduced
};

// A parameter bucket the distributed optimizer gathers at the start of the iteration.
struct Gathered {
  double end = 0;  // parameter offset where the bucket ends
  Event done;
};

// What the builder tracks per pipeline stage (one representative GPU and its CPU thread).
struct Stage {
  uint32_t thread = 0;
  std::array<uint32_t, kNumStreams> stream{};
  uint32_t last_cpu = kNone, first_cpu = kNone;
  // Folded graphs: last_cpu is an event call, read by nothing but the thread's next call.
  bool cpu_plain = false;
  uint32_t launch_group = kNone, launches = 0;  // open run of launch calls (see launch_call)
  std::vector<std::pair<uint32_t, uint32_t>> launch_edges;   // (edge, k) of the open run
  std::array<uint32_t, kNumStreams> last_gpu{};              // last GPU node (its end) per stream
  std::array<std::vector<uint32_t>, kNumStreams> pending{};  // inter-stream waits for the next op
  std::array<int64_t, kNumCommGroups> seq{};                 // next NCCL sequence number
  std::array<std::string, kNumCommGroups> group_name;        // "tp/stage3", ... by CommGroup
  std::vector<Buckets> buckets;                              // per model chunk
  std::vector<std::vector<Gathered>> gathered;  // per model chunk (distributed optimizer)
  std::vector<size_t> gathered_next;            // per model chunk: first bucket not waited for
  std::optional<Event> fsdp_copy_out;           // FSDP forward: the previous layer's use
};

// The two sides of a two-rank NCCL kernel (a pipeline message, the tied embedding's all-reduce).
struct MsgEnds {
  uint32_t send_arrive = kNone, send_transfer = kNone;
  uint32_t recv_arrive = kNone, recv_transfer = kNone;
  uint32_t meeting = kNone, transfer = kNone;  // folded graphs (see Builder::p2p)
};

// What a pass of the builder produces: the graph itself, or only the number of its nodes and
// edges. Both passes run the same code, so the count cannot drift from the graph: in a counting
// pass node() and edge() only count, and nothing that only describes nodes (names, metadata,
// NCCL records, the prices of gradient and parameter collectives) is made.
enum class Pass { kBuild, kCount };

using GraphCount = StepGraphCount;

// Thrown by a counting pass once it passes its limit.
struct CountLimitReached {};
// Thrown by a build whose steady-state periods do not repeat (it is then built unfolded).
struct NotPeriodic {};

// The kinds of layer a run of identical layers may be (layer_fold.cpp): which ops one layer
// runs, in which pass. A run is recorded once per kind and length.
enum LayerKind : int {
  kForwardLayer = 0,
  kFirstForwardLayer = 1,  // the first micro-batch's, with its FP8 weight casts
  kBackwardLayer = 2       // recomputation (if any), then backward
};

// What a run of `count` layers of one kind folds to: the layer recorded in the draft between
// placeholders for the frontier, then cut out again (the stage's state is left as it was).
struct FoldedRun {
  int32_t fold = -1;
  std::array<std::array<bool, LayerFold::kFrontier>, LayerFold::kFrontier> reach{};
  std::vector<std::pair<size_t, uint64_t>> compute_kernels;  // (slot, kernels per layer)
  std::vector<std::pair<size_t, uint64_t>> gpu_kernels;      // (slot, kernels per layer)
  // Frontier entries the layer leaves as they were (their placeholder is the entry after it;
  // the layer may still read it).
  std::array<bool, LayerFold::kFrontier> untouched{};
  // Per input: the first input whose placeholder has the same out-edges (the same dst and lag)
  // and is no output, so that its matrix rows are the same; else itself.
  std::array<int, LayerFold::kFrontier> same_as{0, 1, 2, 3, 4};
};

// The steady state of a schedule (microbatch_fold.cpp). Periods of the steady state are groups
// of `group` consecutive (forward, backward) pairs of a stage's schedule: 1 with 1F1B, p x v
// interleaved (a group later is the same chunks, p micro-batches later). Every stage has
// `periods` full groups after the first whose micro-batches are neither the first nor the last
// (whose passes differ); fewer than none is 0.
int64_t period_group(const ParallelConfig& c);
int64_t steady_periods(const ParallelConfig& c, int64_t microbatches);
// How a build folds its micro-batches: `small` micro-batches give `kBuiltPeriods` periods (the
// graph built), and the layout's own count `periods`.
struct MicrobatchPlan {
  static constexpr int64_t kBuiltPeriods = 3;
  int64_t small = 0;
  int64_t periods = 0;
};
// The plan for this layout, or none (small = 0) when its steady state is too short to fold.
MicrobatchPlan microbatch_plan(const ParallelConfig& c, const Layout& l);
// The finish of every node of a fold's small graph (LayerFold, MicrobatchFold) replayed from
// input `from` alone at 0, the other inputs never finishing (-inf): as the replay does, each
// node starts at its latest predecessor's finish plus the edge's lag and takes its slot's
// duration, or its own over its class's speed.
void replay_fold_graph(const std::vector<LayerFold::Node>& nodes,
                       const std::vector<uint32_t>& edge_begin,
                       const std::vector<uint32_t>& edge_src,
                       const std::vector<double>& edge_lag_us, size_t inputs, size_t from,
                       const ClassSpeeds& speed, const std::vector<double>& slot_us,
                       std::vector<double>* finish);
// Fills the kFoldedPeriods slots of `slot_us` (its other slots filled): each fold's period
// replayed from each state entry, its matrix raised to the folded periods.
void microbatch_fold_durations(const StepGraph& g, const ClassSpeeds& speed,
                               std::vector<double>* slot_us);

// Slot accounting (model_slots.cpp). How a kernel runs: on the GPU's compute units, or as
// communication.
inline NodeClass class_of(const KernelOp& op) {
  return op.comm() ? NodeClass::kComm : NodeClass::kCompute;
}
// How a kernel draws power: collectives and messages, kernels that do matrix arithmetic (GEMMs,
// attention: they carry FLOPs), and the rest, bound by memory bandwidth.
inline PowerClass power_of(const KernelOp& op) {
  return op.comm()         ? PowerClass::kComm
         : op.hw_flops > 0 ? PowerClass::kComputeBound
                           : PowerClass::kMemoryBound;
}
// The slot of an op of `costs`: which list holds it, and where.
ModelSlot slot_of(const StepCosts& costs, const KernelOp& op);
// The kernel kinds of a graph being built: slots are numbered in the order of first use, and
// each new one adds its entries to the graph's per-slot lists.
class SlotTable {
 public:
  // `site`: the ParamPlan site of a slot sized by parameters (StepGraph::slot_site).
  int32_t id(const ModelSlot& slot, NodeClass cls, PowerClass power, StepGraph* out,
             uint32_t site = ParamPlan::kNoSite);

 private:
  std::map<ModelSlot, int32_t> index_;
};

// Builds the graph of one iteration (Pass::kBuild), or counts its nodes and edges
// (Pass::kCount): the origin, then each pipeline stage's iteration on its representative GPU.
template <Pass P>
class Builder {
 public:
  static constexpr bool kCount = P == Pass::kCount;

  // `plan`: this build is `l` with plan->small micro-batches, folded to plan->periods.
  Builder(const ModelSpec& m, const ParallelConfig& c, const Layout& l, const StepCosts& k,
          bool fold, const MicrobatchPlan* plan = nullptr)
      : m_(m), c_(c), l_(l), k_(k), fold_(fold), plan_(plan) {}

  // Pass::kBuild only. Counts first (a counting pass stopped at max_nodes) to refuse a graph
  // above the limit before allocating it, and to reserve what it needs (folded: at most).
  StepGraph build(uint64_t max_nodes, const GraphCount* counted);
  // Pass::kCount only. Throws CountLimitReached once the graph has more than stop_above nodes.
  GraphCount count(uint64_t stop_above);

 private:
  // ---- the passes (step_graph.cpp)
  void iteration();
  uint32_t add_resource(graph::Resource r);
  StepGraph finish();

  // ---- nodes and edges, or only their count
  // Names are interned in the order of first use (a counting pass has none).
  uint32_t intern(const std::string& s) {
    if constexpr (kCount) return 0;
    auto it = name_id_.find(s);
    if (it != name_id_.end()) return it->second;
    names_.push_back(s);
    return name_id_[s] = static_cast<uint32_t>(names_.size() - 1);
  }
  // Names of the ops in StepCosts and of the runtime calls, interned once by address: hashing a
  // string per node was a tenth of the build.
  uint32_t name_of(const std::string& name) {
    if constexpr (kCount) return 0;
    auto it = name_by_address_.find(&name);
    if (it != name_by_address_.end()) return it->second;
    return name_by_address_[&name] = intern(name);
  }
  void node_origin() {
    if constexpr (kCount) {
      count_.nodes = 1;
    } else {
      d_.nodes.push_back({});
      meta_.emplace_back();
      if (plan_) node_period_.push_back(0);
    }
  }
  uint32_t node(NodeKind kind, NodeClass cls, uint32_t res, int s, uint32_t name, double dur) {
    if constexpr (kCount) {
      if (count_.nodes >= stop_above_) throw CountLimitReached{};
      return static_cast<uint32_t>(count_.nodes++);
    } else {
      DraftNode n;
      n.kind = kind;
      n.cls = cls;
      n.resource = res;
      n.step = s;
      n.name = name;
      n.dur_us = dur;
      d_.nodes.push_back(n);
      meta_.emplace_back();
      if (plan_) node_period_.push_back(static_cast<uint8_t>(period_));
      const auto id = static_cast<uint32_t>(d_.nodes.size() - 1);
      meta_[id].stage = s;
      return id;
    }
  }
  void edge(uint32_t src, uint32_t dst, EdgeKind kind, double lag) {
    if constexpr (kCount)
      ++count_.edges;
    else
      d_.edges.push_back({src, dst, kind, lag});
  }
  // A node's metadata (a scratch record in a counting pass).
  StepGraph::NodeMeta& meta(uint32_t id) {
    if constexpr (kCount)
      return scratch_meta_;
    else
      return meta_[id];
  }
  uint64_t node_count() const {
    if constexpr (kCount)
      return count_.nodes;
    else
      return d_.nodes.size();
  }
  uint64_t edge_count() const {
    if constexpr (kCount)
      return count_.edges;
    else
      return d_.edges.size();
  }

  // ---- runtime calls, launches, kernels, events and messages (step_graph_emit.cpp)
  uint32_t cpu_call(int s, const std::string& name, double dur);
  uint32_t new_call(int s, const std::string& name, double dur);
  uint32_t launch_call(int s);
  void close_launches(int s);
  uint32_t gpu_node(int s, int role, uint32_t name, NodeClass cls, double dur, uint32_t launch);
  void enqueue(int s, int role, uint32_t id, uint32_t launch);
  int32_t add_comm(int s, const KernelOp& op, const std::string& group, bool recv);
  int32_t gemm_index(const cost::GemmQuery& q);
  uint32_t kernel(int s, int role, const KernelOp& op);
  uint32_t kernel(int s, int role, const KernelOp& op, Src source, uint32_t site);
  uint32_t kernel_node(int s, int role, const KernelOp& op, uint32_t name);
  // `defer`: leave out the deferrable ops (a micro-batch whose output-layer weight gradient waits
  // for drain_head_wgrads).
  void kernels(int s, const std::vector<KernelOp>& ops, bool first_microbatch = false,
               bool defer = false);
  void stream_wait(int s, int from, int to);
  Event record_event(int s, int from);
  void wait_event(int s, const Event& e, int to);
  std::pair<uint32_t, uint32_t> meeting_kernel(int s, int role, const KernelOp& op);
  void meet(const MsgEnds& e);
  void p2p(int s, int role, bool recv, int64_t key_dir, int64_t mb, int64_t boundary);
  // A message by direction (0 forward, 1 backward), micro-batch and the virtual stage boundary it
  // crosses; both sides find it here.
  size_t message_index(int64_t key_dir, int64_t mb, int64_t boundary) const {
    return static_cast<size_t>((key_dir * l_.microbatches + mb) * virtual_stages_ + boundary);
  }
  int32_t p2p_comm(int s, bool recv, int64_t key_dir, int64_t mb, int64_t boundary);
  void embedding_allreduce(int s);
  uint32_t rendezvous_name();

  // ---- slot accounting (model_slots.cpp; a counting pass keeps none)
  int32_t slot_id(const ModelSlot& slot, NodeClass cls, PowerClass power = PowerClass::kComm,
                  uint32_t site = ParamPlan::kNoSite) {
    if constexpr (kCount)
      return -1;
    else
      return slots_.id(slot, cls, power, &out_, site);
  }
  ModelSlot slot_of(const KernelOp& op) const { return detail::slot_of(k_, op); }
  // StepGraph::compute_kernels and gpu_kernels.
  void count_kernel(int role, int32_t slot) {
    if constexpr (!kCount) {
      if (role == kComputeStream) ++out_.compute_kernels[static_cast<size_t>(slot)];
      ++out_.gpu_kernels[static_cast<size_t>(slot)];
    }
  }

  // ---- runs of identical layers (layer_fold.cpp)
  void layer_run(int s, LayerKind kind, int64_t count);
  void emit_layer(int s, LayerKind kind);
  FoldedRun record_run(int s, LayerKind kind, int64_t count);
  uint32_t fold_name();
  uint32_t join(const std::vector<uint32_t>& preds, NodeKind kind, NodeClass cls, uint32_t res,
                int s, EdgeKind ek);

  // ---- the steady state folded (microbatch_fold.cpp)
  int task_period(int64_t index, int64_t warmup, int64_t tasks) const;
  bool fold_microbatches();

  // ---- a stage's iteration (training_schedule.cpp)
  void stage_iteration(int s);
  KernelOp grad_reduce(double params) const;
  KernelOp param_gather(double params) const;
  KernelOp optimizer(double params) const;
  void grads_ready(int s, Buckets* b, int64_t j);
  int64_t layers_of(int64_t virtual_stage) const {
    return l_.chunk_layers[static_cast<size_t>(virtual_stage)];
  }
  void gather_updated_params(int s);
  void wait_gathered(int s, int64_t ch, double upto);
  uint32_t share_site(int64_t j, int64_t i, int64_t layers) const {
    return params_.share_site(j == 0 && i == 0, j == last_vs_ && i == layers - 1);
  }
  void fsdp_gather(int s, int64_t j, int64_t i, int64_t layers);
  void use_gathered(int s, int64_t j, int64_t next, int64_t layers, bool forward);
  void fsdp_reduce(int s, int64_t j, int64_t i, int64_t layers);
  void forward_pass(int s, const PipelineTask& t);
  void backward_pass(int s, const PipelineTask& t);
  void drain_head_wgrads(int s);
  bool ties_embedding(int s) const;
  void optimizer_step(int s);

  const ModelSpec& m_;
  const ParallelConfig& c_;
  const Layout& l_;
  const StepCosts& k_;
  const ParamCounts pc_ = parameter_counts(m_, l_.padded_vocab);
  const int64_t virtual_stages_ = int64_t{c_.pp} * c_.interleave;
  const int64_t last_vs_ = virtual_stages_ - 1;
  // The parameter counts of the buckets, gathers and optimizer steps, by site (param_plan.hpp).
  const ParamPlan params_ = param_plan(m_, c_, l_, k_);
  const bool fsdp_ = params_.fsdp;
  // Micro-batches whose output-layer weight gradient runs after the last backward pass (the
  // microbatch fold is off for such layouts: their micro-batches differ).
  const int64_t deferred_ =
      k_.opt.with(Term::kDeferredHeadWgrads) ? deferred_head_wgrad_count(c_, l_.microbatches) : 0;
  const bool fold_;
  const MicrobatchPlan* plan_;
  int period_ = 0;                    // of the task being emitted (plan_ only)
  std::vector<uint8_t> node_period_;  // per draft node: its task's period (plan_ only)
  // Kernels per slot that one folded period runs (the tasks of the last built period), and
  // the counts before the task being emitted.
  std::vector<uint64_t> period_compute_total_, period_gpu_total_;
  std::vector<uint64_t> period_compute_, period_gpu_;
  // Whether the first micro-batch's forward layers run more ops (another kind of folded run).
  const bool first_microbatch_ops_ =
      std::any_of(k_.layer_fwd.begin(), k_.layer_fwd.end(),
                  [](const KernelOp& op) { return op.first_microbatch_only; });
  uint32_t fold_name_ = kNone;
  uint32_t fold_periods_name_ = kNone;
  graph::Draft d_;
  std::vector<graph::Resource> resources_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_id_;
  std::unordered_map<const std::string*, uint32_t> name_by_address_;
  std::vector<graph::Step> steps_;
  std::vector<Stage> stages_;
  std::vector<MsgEnds> messages_;  // by message_index
  MsgEnds embedding_ends_;         // first stage "sends", last stage "receives"
  uint32_t rendezvous_name_ = kNone;
  std::vector<StepGraph::NodeMeta> meta_;  // per draft node
  StepGraph::NodeMeta scratch_meta_;       // counting pass: written, never read
  std::vector<uint32_t> stage_end_;
  StepGraph out_;
  GraphCount count_;                                            // counting pass
  uint64_t stop_above_ = std::numeric_limits<uint64_t>::max();  // counting pass
  // Distinct GEMM shapes, so that a written trace carries each kernel's operator shape.
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int, bool>, int32_t> gemm_of_;
  // A StepCosts op's slot by its address (slot_of scans the lists, the slot table compares
  // slots: per kernel, a few percent of a build).
  std::unordered_map<const KernelOp*, int32_t> slot_by_address_;
  SlotTable slots_;
  std::map<std::pair<int, int64_t>, FoldedRun> runs_;  // by (kind, count)
  // Scratch lists of layer_run: a run per pass would otherwise allocate a dozen.
  std::array<std::vector<uint32_t>, LayerFold::kFrontier> run_in_, run_joined_, run_entry_;
};

}  // namespace lumos::model::detail
