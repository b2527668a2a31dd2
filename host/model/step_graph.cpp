#include "model/step_graph.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "common/error.hpp"
#include "graph/flatten.hpp"
#include "model/pipeline_schedule.hpp"

namespace lumos::model {
namespace {

using graph::DraftEdge;
using graph::DraftNode;
using graph::EdgeKind;
using graph::NodeClass;
using graph::NodeKind;
using Src = ModelSlot::Source;

constexpr uint32_t kNone = 0;
const std::string kLaunchCall = "cudaLaunchKernel";
const std::string kRecordCall = "cudaEventRecord";
const std::string kWaitCall = "cudaStreamWaitEvent";
const std::string kSyncCall =
    "cudaStreamSynchronize";  // draft id 0 is the origin, never a real predecessor here

const char* collective_arg(cost::Collective c, bool recv) {
  switch (c) {
    case cost::Collective::kAllReduce:
      return "allreduce";
    case cost::Collective::kAllGather:
      return "allgather";
    case cost::Collective::kReduceScatter:
      return "reduce_scatter";
    case cost::Collective::kSendRecv:
      return recv ? "recv" : "send";
    default:
      return "other";
  }
}

// A recorded CUDA event: the call that recorded it and the GPU op it marks (the last one on its
// stream then).
struct Event {
  uint32_t call = kNone, src = kNone;
  int from = 0;
};

// Gradient buckets of one model chunk, filled in backward order (head, layers last to first,
// embedding), each reduced as soon as it is complete.
struct Buckets {
  double filled = 0;
  std::vector<double> sizes;  // params of each launched bucket
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
};

// What a pass of the builder produces: the graph itself, or only the number of its nodes and
// edges. Both passes run the same code below, so the count cannot drift from the graph: in a
// counting pass node() and edge() only count, and nothing that only describes nodes (names,
// metadata, NCCL records, the prices of gradient and parameter collectives) is made.
enum class Pass { kBuild, kCount };

using GraphCount = StepGraphCount;

// Thrown by a counting pass once it passes its limit.
struct CountLimitReached {};

template <Pass P>
class Builder {
 public:
  static constexpr bool kCount = P == Pass::kCount;

  Builder(const ModelSpec& m, const ParallelConfig& c, const Layout& l, const StepCosts& k,
          bool fold)
      : m_(m), c_(c), l_(l), k_(k), fold_(fold) {}

  // Pass::kBuild only. Counts first (a counting pass stopped at max_nodes) to refuse a graph
  // above the limit before allocating it, and to reserve what it needs (folded: at most).
  StepGraph build(uint64_t max_nodes, const GraphCount* counted) {
    GraphCount expect;
    try {
      expect = counted && counted->nodes <= max_nodes
                   ? *counted
                   : Builder<Pass::kCount>(m_, c_, l_, k_, fold_).count(max_nodes);
    } catch (const CountLimitReached&) {
      throw InputError("the iteration has more than " + std::to_string(max_nodes) +
                       " kernels and calls, the limit (fewer micro-batches or layers, or a "
                       "larger --mbs)");
    }
    // A fold's layer is recorded in the draft before it is cut out again.
    d_.nodes.reserve(expect.nodes + expect.layer_nodes);
    d_.edges.reserve(expect.edges + expect.layer_edges);
    meta_.reserve(expect.nodes + expect.layer_nodes);
    iteration();
    return finish();
  }

  // Pass::kCount only. Throws CountLimitReached once the graph has more than stop_above nodes.
  GraphCount count(uint64_t stop_above) {
    stop_above_ = stop_above;
    iteration();
    return count_;
  }

 private:
  struct MsgEnds {
    uint32_t send_arrive = kNone, send_transfer = kNone;
    uint32_t recv_arrive = kNone, recv_transfer = kNone;
    uint32_t meeting = kNone, transfer = kNone;  // folded graphs (see p2p)
  };

  // The origin, each stage's resources and step, then each stage's iteration; every pipeline
  // message must have met its peer.
  void iteration() {
    node_origin();
    out_.stages = c_.pp;
    out_.world_size = static_cast<int32_t>(c_.gpus());
    out_.gpus_per_node = k_.topo ? k_.topo->gpus_per_node : 8;
    const int64_t per_stage_ranks = int64_t{c_.tp} * c_.cp * c_.dp;
    stages_.resize(static_cast<size_t>(c_.pp));
    for (int s = 0; s < c_.pp; ++s) {
      const auto rank = static_cast<int32_t>(s * per_stage_ranks);
      out_.stage_rank.push_back(rank);
      Stage& st = stages_[static_cast<size_t>(s)];
      st.thread = add_resource({graph::ResourceKind::kThread, rank, 1000, kThreadId});
      const int64_t device = rank % std::max(1, out_.gpus_per_node);
      for (int r = 0; r < kNumStreams; ++r)
        st.stream[static_cast<size_t>(r)] =
            add_resource({graph::ResourceKind::kStream, rank, device, kStreamIds[r]});
      steps_.push_back({"ProfilerStep#1", rank, graph::kOrigin, 0});
      for (CommGroup grp : {CommGroup::kTp, CommGroup::kCp, CommGroup::kDp})
        st.group_name[static_cast<size_t>(grp)] =
            std::string(to_string(grp)) + "/stage" + std::to_string(s);
    }
    messages_.resize(2 * static_cast<size_t>(l_.microbatches) * virtual_stages_);
    for (int s = 0; s < c_.pp; ++s) stage_iteration(s);
    for (const MsgEnds& ends : messages_)
      if ((ends.send_arrive == kNone) != (ends.recv_arrive == kNone))
        throw std::logic_error("step graph: unmatched pipeline message");
  }

  uint32_t add_resource(graph::Resource r) {
    resources_.push_back(r);
    return static_cast<uint32_t>(resources_.size() - 1);
  }
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
  uint32_t rendezvous_name() {
    if (rendezvous_name_ == kNone) rendezvous_name_ = intern("rendezvous " + k_.p2p.name);
    return rendezvous_name_;
  }

  // The nodes and edges of the graph, or only their count.
  void node_origin() {
    if constexpr (kCount) {
      count_.nodes = 1;
    } else {
      d_.nodes.push_back({});
      meta_.emplace_back();
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

  // A runtime call on the stage's thread, after the previous one.
  uint32_t cpu_call(int s, const std::string& name, double dur) {
    close_launches(s);
    // A folded graph keeps calls that only the thread's next call reads as one node (the same
    // end); event record and wait calls are such. Nothing writes it as a trace.
    Stage& st = stages_[static_cast<size_t>(s)];
    const bool plain = fold_ && (&name == &kRecordCall || &name == &kWaitCall);
    if (plain && st.cpu_plain) {
      if constexpr (!kCount) d_.nodes[st.last_cpu].dur_us += dur;
      return st.last_cpu;
    }
    const uint32_t id = new_call(s, name, dur);
    st.cpu_plain = plain;
    return id;
  }
  uint32_t new_call(int s, const std::string& name, double dur) {
    Stage& st = stages_[static_cast<size_t>(s)];
    const uint32_t id = node(NodeKind::kRuntime, NodeClass::kCpu, st.thread, s, name_of(name), dur);
    if (st.last_cpu == kNone) st.first_cpu = id;
    edge(st.last_cpu, id, st.last_cpu == kNone ? EdgeKind::kOrigin : EdgeKind::kIntraThread, 0);
    st.last_cpu = id;
    return id;
  }

  // Back-to-back cudaLaunchKernel calls share one CPU node (n calls of cpu_launch_us each): the
  // k-th kernel's launch edge lag makes it start launch_latency_us after the k-th call ends. This
  // halves the graph; the Kineto writer expands the node into its n calls again.
  uint32_t launch_call(int s) {
    Stage& st = stages_[static_cast<size_t>(s)];
    if (st.launch_group == kNone) {
      // Launch edges lag from the group's end, so the group may begin with plain calls.
      if (st.cpu_plain) {
        if constexpr (!kCount) d_.nodes[st.last_cpu].dur_us += k_.cpu_launch_us;
        st.launch_group = st.last_cpu;
      } else {
        st.launch_group = new_call(s, kLaunchCall, k_.cpu_launch_us);
      }
      st.cpu_plain = false;
      st.launches = 1;
    } else {
      if constexpr (!kCount) d_.nodes[st.launch_group].dur_us += k_.cpu_launch_us;
      ++st.launches;
    }
    return st.launch_group;
  }
  void close_launches(int s) {
    Stage& st = stages_[static_cast<size_t>(s)];
    if constexpr (!kCount) {
      for (const auto& [e, k] : st.launch_edges)
        d_.edges[e].lag_us =
            k_.launch_latency_us - static_cast<double>(st.launches - 1 - k) * k_.cpu_launch_us;
      st.launch_edges.clear();
    }
    st.launch_group = kNone;
    st.launches = 0;
  }

  // Launches a GPU node on a stream: after its launch call, the stream's previous op and any
  // inter-stream waits queued for the stream.
  uint32_t gpu_node(int s, int role, uint32_t name, NodeClass cls, double dur, uint32_t launch) {
    Stage& st = stages_[static_cast<size_t>(s)];
    const auto r = static_cast<size_t>(role);
    const uint32_t id = node(NodeKind::kKernel, cls, st.stream[r], s, name, dur);
    meta(id).stream = static_cast<int8_t>(role);
    enqueue(s, role, id, launch);
    return id;
  }
  // What a GPU op on `role` waits for: its launch, the stream's previous op, queued waits.
  void enqueue(int s, int role, uint32_t id, uint32_t launch) {
    Stage& st = stages_[static_cast<size_t>(s)];
    const auto r = static_cast<size_t>(role);
    if constexpr (!kCount)
      st.launch_edges.push_back({static_cast<uint32_t>(d_.edges.size()), st.launches - 1});
    edge(launch, id, EdgeKind::kLaunch, k_.launch_latency_us);
    if (st.last_gpu[r] != kNone) edge(st.last_gpu[r], id, EdgeKind::kIntraStream, 0);
    for (uint32_t w : st.pending[r]) edge(w, id, EdgeKind::kInterStream, 0);
    st.pending[r].clear();
    st.last_gpu[r] = id;
  }

  // The NCCL arguments of a collective kernel (a counting pass has none).
  int32_t add_comm(int s, const KernelOp& op, const std::string& group, bool recv) {
    if constexpr (kCount) return -1;
    CommRecord rec;
    rec.process_group = group;
    if (op.group != CommGroup::kPp)
      rec.seq = stages_[static_cast<size_t>(s)].seq[static_cast<size_t>(op.group)]++;
    rec.collective = collective_arg(op.collective, recv);
    rec.in_nelems = op.nelems;
    rec.out_nelems = op.out_nelems;
    rec.group_size = op.group_size;
    rec.dtype = op.name.find("f32") != std::string::npos ? "Float" : "BFloat16";
    out_.comms.push_back(rec);
    return static_cast<int32_t>(out_.comms.size() - 1);
  }

  // Distinct GEMM shapes, so that a written trace carries each kernel's operator shape.
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int>, int32_t> gemm_of_;
  int32_t gemm_index(const cost::GemmQuery& q) {
    if constexpr (kCount) return -1;
    const auto key = std::make_tuple(q.m, q.n, q.k, q.batch, static_cast<int>(q.dtype));
    auto [it, fresh] = gemm_of_.emplace(key, static_cast<int32_t>(out_.gemms.size()));
    if (fresh) out_.gemms.push_back(q);
    return it->second;
  }

  // A kernel priced from `op`, an op of StepCosts (its name is interned by address; its slot is
  // its place in StepCosts).
  uint32_t kernel(int s, int role, const KernelOp& op) {
    const uint32_t id = kernel_node(s, role, op, name_of(op.name));
    meta(id).slot = slot_id(slot_of(op), class_of(op), power_of(op));
    count_kernel(role, meta(id).slot);
    return id;
  }
  // A kernel priced for its size, `params` parameters (a gradient reduction, a parameter gather,
  // the optimizer step): `op` is a temporary.
  uint32_t kernel(int s, int role, const KernelOp& op, Src source, double params) {
    const uint32_t id = kernel_node(s, role, op, intern(op.name));
    meta(id).slot = slot_id({source, 0, params}, class_of(op), power_of(op));
    count_kernel(role, meta(id).slot);
    return id;
  }
  static NodeClass class_of(const KernelOp& op) {
    return op.comm() ? NodeClass::kComm : NodeClass::kCompute;
  }
  // StepGraph::compute_kernels and gpu_kernels.
  void count_kernel(int role, int32_t slot) {
    if constexpr (!kCount) {
      if (role == kComputeStream) ++out_.compute_kernels[static_cast<size_t>(slot)];
      ++out_.gpu_kernels[static_cast<size_t>(slot)];
    }
  }
  uint32_t kernel_node(int s, int role, const KernelOp& op, uint32_t name) {
    const uint32_t call = launch_call(s);
    const uint32_t id = gpu_node(s, role, name, class_of(op), op.dur_us, call);
    meta(id).model_flops = op.model_flops;
    meta(id).hw_flops = op.hw_flops;
    // What only a written trace needs is left out of a folded graph, which is never written.
    if (fold_) return id;
    if (op.gemm) meta(id).gemm = gemm_index(*op.gemm);
    if (op.comm())
      meta(id).comm = add_comm(
          s, op, stages_[static_cast<size_t>(s)].group_name[static_cast<size_t>(op.group)], false);
    return id;
  }

  // The slot of an op of StepCosts: which list holds it, and where.
  ModelSlot slot_of(const KernelOp& op) const {
    const std::pair<Src, const std::vector<KernelOp>*> lists[] = {
        {Src::kLayerFwd, &k_.layer_fwd},
        {Src::kLayerBwd, &k_.layer_bwd},
        {Src::kLayerRecompute, &k_.layer_recompute},
        {Src::kEmbedFwd, &k_.embed_fwd},
        {Src::kEmbedBwd, &k_.embed_bwd},
        {Src::kHeadFwd, &k_.head_fwd},
        {Src::kHeadBwd, &k_.head_bwd}};
    for (const auto& [source, list] : lists)
      if (!list->empty() && &op >= list->data() && &op < list->data() + list->size())
        return {source, static_cast<uint32_t>(&op - list->data()), 0};
    if (&op == &k_.p2p) return {Src::kP2p, 0, 0};
    if (&op == &k_.embedding_allreduce) return {Src::kEmbeddingAllreduce, 0, 0};
    throw std::logic_error("step graph: a kernel's op is not in StepCosts");
  }
  // Slots are numbered in the order of first use (a counting pass has none).
  int32_t slot_id(const ModelSlot& slot, NodeClass cls, PowerClass power = PowerClass::kComm) {
    if constexpr (kCount) return -1;
    auto [it, fresh] = slot_of_.emplace(slot, static_cast<int32_t>(out_.slots.size()));
    if (fresh) {
      out_.slots.push_back(slot);
      out_.slot_class.push_back(static_cast<uint8_t>(cls));
      out_.slot_power.push_back(power);
      out_.compute_kernels.push_back(0);
      out_.gpu_kernels.push_back(0);
    }
    return it->second;
  }
  // How a kernel draws power: collectives and messages, kernels that do matrix arithmetic (GEMMs,
  // attention: they carry FLOPs), and the rest, bound by memory bandwidth.
  static PowerClass power_of(const KernelOp& op) {
    return op.comm()         ? PowerClass::kComm
           : op.hw_flops > 0 ? PowerClass::kComputeBound
                             : PowerClass::kMemoryBound;
  }
  std::map<ModelSlot, int32_t> slot_of_;

  void kernels(int s, const std::vector<KernelOp>& ops, bool first_microbatch = false) {
    for (const auto& op : ops) {
      if (op.first_microbatch_only && !first_microbatch) continue;
      if (op.join) stream_wait(s, kTpStream, kComputeStream);
      if (op.side && op.fork) stream_wait(s, kComputeStream, kTpStream);
      kernel(s, op.side ? kTpStream : kComputeStream, op);
    }
  }

  // `count` layers, each emitted by `layer()`, one after another with nothing else between them:
  // with folding, one LayerFold and a node per entry of its matrix that some path joins. A layer
  // depends on nothing but its frontier and `kind` (which ops, in which pass), so each kind and
  // length is recorded once: between placeholders for the frontier, then cut out of the draft.
  template <class EmitLayer>
  void layer_run(int s, int kind, int64_t count, const EmitLayer& layer) {
    Stage& st = stages_[static_cast<size_t>(s)];
    if (!fold_ || count < 2 || st.last_cpu == kNone) {
      for (int64_t i = 0; i < count; ++i) layer();
      return;
    }
    // Launches split into two groups start when they would in one (see launch_call), so the
    // run's first launch may start a group of its own.
    close_launches(s);
    constexpr int K = LayerFold::kFrontier;
    constexpr int kRoles[2] = {kComputeStream, kTpStream};
    // Scratch lists kept by the builder: a run per pass would otherwise allocate a dozen.
    auto& in = run_in_;
    for (auto& list : in) list.clear();
    in[0].push_back(st.last_cpu);
    for (int r = 0; r < 2; ++r) {
      const uint32_t last = st.last_gpu[static_cast<size_t>(kRoles[r])];
      if (last != kNone) in[static_cast<size_t>(1 + r)].push_back(last);
      in[static_cast<size_t>(3 + r)] = st.pending[static_cast<size_t>(kRoles[r])];
    }
    auto [known, fresh] = runs_.try_emplace({kind, count});
    FoldedRun& run = known->second;
    if (fresh) run = record_run(s, count, layer);
    for (const auto& [slot, layer_kernels] : run.compute_kernels)
      out_.compute_kernels[slot] += layer_kernels * static_cast<uint64_t>(count);
    for (const auto& [slot, layer_kernels] : run.gpu_kernels)
      out_.gpu_kernels[slot] += layer_kernels * static_cast<uint64_t>(count);
    const auto& reach = run.reach;
    const int32_t fold = run.fold;
    // Inputs the layer reads alike give one entry per output, after the latest of them.
    auto& joined = run_joined_;
    for (auto& list : joined) list.clear();
    for (int i = 0; i < K; ++i)
      for (uint32_t x : in[static_cast<size_t>(i)])
        joined[static_cast<size_t>(run.same_as[static_cast<size_t>(i)])].push_back(x);
    auto& entry = run_entry_;
    for (auto& list : entry) list.clear();
    for (int j = 0; j < K; ++j) {
      if (run.untouched[static_cast<size_t>(j)]) {  // the layer neither reads nor changes it
        entry[static_cast<size_t>(j)] = in[static_cast<size_t>(j)];
        continue;
      }
      for (int i = 0; i < K; ++i) {
        if (joined[static_cast<size_t>(i)].empty() ||
            !reach[static_cast<size_t>(i)][static_cast<size_t>(j)])
          continue;
        const uint32_t n =
            node(NodeKind::kVirtual, NodeClass::kVirtual, graph::kNoResource, s, fold_name(), 0);
        meta(n).slot = slot_id({ModelSlot::Source::kFolded, static_cast<uint32_t>(fold),
                                static_cast<double>(i * K + j)},
                               NodeClass::kVirtual);
        for (uint32_t x : joined[static_cast<size_t>(i)]) edge(x, n, EdgeKind::kInterStream, 0);
        entry[static_cast<size_t>(j)].push_back(n);
      }
    }
    if (entry[0].empty()) throw std::logic_error("step graph: a folded run without a thread");
    st.last_cpu =
        join(entry[0], NodeKind::kRuntime, NodeClass::kCpu, st.thread, s, EdgeKind::kIntraThread);
    st.cpu_plain = false;
    for (int r = 0; r < 2; ++r) {
      const auto role = static_cast<size_t>(kRoles[r]);
      const auto& ends = entry[static_cast<size_t>(1 + r)];
      st.last_gpu[role] = ends.empty() ? kNone
                                       : join(ends, NodeKind::kKernel,
                                              r == 0 ? NodeClass::kCompute : NodeClass::kComm,
                                              st.stream[role], s, EdgeKind::kIntraStream);
      if (ends.size() > 1) meta(st.last_gpu[role]).stream = static_cast<int8_t>(kRoles[r]);
      st.pending[role] = entry[static_cast<size_t>(3 + r)];
    }
  }
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
  std::map<std::pair<int, int64_t>, FoldedRun> runs_;  // by (kind, count)
  std::array<std::vector<uint32_t>, LayerFold::kFrontier> run_in_, run_joined_, run_entry_;
  template <class EmitLayer>
  FoldedRun record_run(int s, int64_t count, const EmitLayer& layer) {
    constexpr int K = LayerFold::kFrontier;
    constexpr int kRoles[2] = {kComputeStream, kTpStream};
    Stage& st = stages_[static_cast<size_t>(s)];
    const std::array<uint32_t, 3> frontier = {st.last_cpu, st.last_gpu[kComputeStream],
                                              st.last_gpu[kTpStream]};
    const std::array<std::vector<uint32_t>, 2> pending = {st.pending[kComputeStream],
                                                          st.pending[kTpStream]};
    const uint64_t n0 = node_count(), e0 = edge_count();
    const size_t comms0 = out_.comms.size();
    const auto seq0 = st.seq;
    const std::vector<uint64_t> compute0 = out_.compute_kernels, gpu0 = out_.gpu_kernels;
    const bool plain0 = st.cpu_plain;
    st.cpu_plain = false;
    std::array<uint32_t, K> placeholder{};
    for (uint32_t& ph : placeholder)
      ph = node(NodeKind::kVirtual, NodeClass::kVirtual, graph::kNoResource, s, 0, 0);
    st.last_cpu = placeholder[0];
    for (int r = 0; r < 2; ++r) {
      st.last_gpu[static_cast<size_t>(kRoles[r])] = placeholder[static_cast<size_t>(1 + r)];
      st.pending[static_cast<size_t>(kRoles[r])] = {placeholder[static_cast<size_t>(3 + r)]};
    }
    layer();
    close_launches(s);
    std::array<std::vector<uint32_t>, K> after;
    after[0] = {st.last_cpu};
    for (int r = 0; r < 2; ++r) {
      after[static_cast<size_t>(1 + r)] = {st.last_gpu[static_cast<size_t>(kRoles[r])]};
      after[static_cast<size_t>(3 + r)] = st.pending[static_cast<size_t>(kRoles[r])];
    }
    // Which frontier entries after the run have a path from which before it (a counting pass,
    // which keeps no edges, assumes all).
    FoldedRun run;
    for (int j = 0; j < K; ++j)
      run.untouched[static_cast<size_t>(j)] =
          after[static_cast<size_t>(j)] ==
          std::vector<uint32_t>{placeholder[static_cast<size_t>(j)]};
    if constexpr (kCount) {
      for (auto& row : run.reach) row.fill(true);
      count_.layer_nodes = std::max(count_.layer_nodes, count_.nodes - n0);
      count_.layer_edges = std::max(count_.layer_edges, count_.edges - e0);
      count_.nodes = n0;
      count_.edges = e0;
    } else {
      LayerFold f = record_layer(n0, e0, after);
      f.layers = count;
      run.reach = run_reach(f);
      run.same_as = alike_inputs(f);
      run.fold = static_cast<int32_t>(out_.folds.size());
      out_.folds.push_back(std::move(f));
      d_.nodes.resize(n0);
      d_.edges.resize(e0);
      meta_.resize(n0);
      out_.comms.resize(comms0);
      // The layer's kernels, counted by the caller for the whole run.
      auto take_layer = [](std::vector<uint64_t>& counts, const std::vector<uint64_t>& before,
                           std::vector<std::pair<size_t, uint64_t>>* per_layer) {
        for (size_t k = 0; k < counts.size(); ++k) {
          const uint64_t b = k < before.size() ? before[k] : 0;
          if (counts[k] > b) per_layer->emplace_back(k, counts[k] - b);
          counts[k] = b;
        }
      };
      take_layer(out_.compute_kernels, compute0, &run.compute_kernels);
      take_layer(out_.gpu_kernels, gpu0, &run.gpu_kernels);
    }
    st.seq = seq0;
    st.last_cpu = frontier[0];
    st.cpu_plain = plain0;
    for (int r = 0; r < 2; ++r) {
      st.last_gpu[static_cast<size_t>(kRoles[r])] = frontier[static_cast<size_t>(1 + r)];
      st.pending[static_cast<size_t>(kRoles[r])] = pending[static_cast<size_t>(r)];
    }
    return run;
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
  uint32_t fold_name() {
    if (fold_name_ == kNone) fold_name_ = intern("folded layers");
    return fold_name_;
  }
  // A node on `res` that ends when the latest of `preds` does (the one predecessor itself).
  uint32_t join(const std::vector<uint32_t>& preds, NodeKind kind, NodeClass cls, uint32_t res,
                int s, EdgeKind ek) {
    if (preds.size() == 1) return preds.front();
    const uint32_t n = node(kind, cls, res, s, fold_name(), 0);
    for (uint32_t p : preds) edge(p, n, ek, 0);
    return n;
  }
  // The layer recorded in the draft from node n0 and edge e0 on; its first kFrontier nodes are
  // the placeholders.
  LayerFold record_layer(uint64_t n0, uint64_t e0,
                         const std::array<std::vector<uint32_t>, LayerFold::kFrontier>& after) {
    LayerFold f;
    const auto nodes = static_cast<uint32_t>(d_.nodes.size() - n0);
    f.nodes.resize(nodes);
    for (uint32_t k = 0; k < nodes; ++k) {
      const DraftNode& dn = d_.nodes[n0 + k];
      f.nodes[k] = {meta_[n0 + k].slot, dn.dur_us, static_cast<uint8_t>(dn.cls)};
    }
    f.edge_begin.assign(nodes + 1, 0);
    for (uint64_t e = e0; e < d_.edges.size(); ++e) {
      const DraftEdge& de = d_.edges[e];
      if (de.src < n0 || de.src >= de.dst)
        throw std::logic_error("step graph: a folded layer depends on more than its frontier");
      ++f.edge_begin[de.dst - n0 + 1];
    }
    for (uint32_t k = 0; k < nodes; ++k) f.edge_begin[k + 1] += f.edge_begin[k];
    f.edge_src.resize(f.edge_begin[nodes]);
    f.edge_lag_us.resize(f.edge_begin[nodes]);
    std::vector<uint32_t> fill(f.edge_begin.begin(), f.edge_begin.end() - 1);
    for (uint64_t e = e0; e < d_.edges.size(); ++e) {
      const DraftEdge& de = d_.edges[e];
      const uint32_t at = fill[de.dst - n0]++;
      f.edge_src[at] = static_cast<uint32_t>(de.src - n0);
      f.edge_lag_us[at] = de.lag_us;
    }
    for (size_t j = 0; j < after.size(); ++j)
      for (uint32_t x : after[j]) f.outputs[j].push_back(static_cast<uint32_t>(x - n0));
    return f;
  }
  // FoldedRun::same_as of a recorded layer.
  static std::array<int, LayerFold::kFrontier> alike_inputs(const LayerFold& f) {
    constexpr int K = LayerFold::kFrontier;
    std::array<std::vector<std::pair<uint32_t, double>>, K> out;
    std::array<bool, K> is_output{};
    for (size_t n = K; n < f.nodes.size(); ++n)
      for (uint32_t e = f.edge_begin[n]; e < f.edge_begin[n + 1]; ++e)
        if (f.edge_src[e] < K)
          out[f.edge_src[e]].emplace_back(static_cast<uint32_t>(n), f.edge_lag_us[e]);
    for (const auto& list : f.outputs)
      for (uint32_t o : list)
        if (o < K) is_output[o] = true;
    std::array<int, K> same{0, 1, 2, 3, 4};
    for (int i = 0; i < K; ++i) {
      std::sort(out[static_cast<size_t>(i)].begin(), out[static_cast<size_t>(i)].end());
      if (is_output[static_cast<size_t>(i)] || out[static_cast<size_t>(i)].empty()) continue;
      for (int k = 0; k < i; ++k)
        if (same[static_cast<size_t>(k)] == k && !is_output[static_cast<size_t>(k)] &&
            out[static_cast<size_t>(k)] == out[static_cast<size_t>(i)]) {
          same[static_cast<size_t>(i)] = k;
          break;
        }
    }
    return same;
  }
  // Which frontier entries after f.layers layers have a path from which entries before them.
  static std::array<std::array<bool, LayerFold::kFrontier>, LayerFold::kFrontier> run_reach(
      const LayerFold& f) {
    constexpr int K = LayerFold::kFrontier;
    using Reach = std::array<std::array<bool, K>, K>;
    std::vector<uint8_t> from(f.nodes.size(), 0);  // bit i: a path from frontier entry i
    for (int i = 0; i < K; ++i) from[static_cast<size_t>(i)] = static_cast<uint8_t>(1 << i);
    for (size_t n = K; n < f.nodes.size(); ++n)
      for (uint32_t e = f.edge_begin[n]; e < f.edge_begin[n + 1]; ++e)
        from[n] |= from[f.edge_src[e]];
    Reach one{}, run{};
    for (int j = 0; j < K; ++j)
      for (uint32_t o : f.outputs[static_cast<size_t>(j)])
        for (int i = 0; i < K; ++i)
          if (from[o] >> i & 1) one[static_cast<size_t>(i)][static_cast<size_t>(j)] = true;
    run = one;
    for (int64_t l = 1; l < f.layers; ++l) {
      Reach next{};
      for (int i = 0; i < K; ++i)
        for (int m = 0; m < K; ++m)
          if (run[static_cast<size_t>(i)][static_cast<size_t>(m)])
            for (int j = 0; j < K; ++j)
              next[static_cast<size_t>(i)][static_cast<size_t>(j)] =
                  next[static_cast<size_t>(i)][static_cast<size_t>(j)] ||
                  one[static_cast<size_t>(m)][static_cast<size_t>(j)];
      if (next == run) break;  // reachability settles within K layers
      run = next;
    }
    return run;
  }

  // cudaEventRecord after the last op on `from`, cudaStreamWaitEvent on `to`: the next op on
  // `to` waits for it.
  void stream_wait(int s, int from, int to) { wait_event(s, record_event(s, from), to); }

  Event record_event(int s, int from) {
    Stage& st = stages_[static_cast<size_t>(s)];
    Event e;
    e.src = st.last_gpu[static_cast<size_t>(from)];
    e.call = cpu_call(s, kRecordCall, k_.event_call_us);
    e.from = from;
    return e;
  }
  void wait_event(int s, const Event& e, int to) {
    const uint32_t wait = cpu_call(s, kWaitCall, k_.event_call_us);
    meta(wait).waits_on = static_cast<int8_t>((to << 4) | e.from);
    meta(wait).record = e.call;
    if (e.src != kNone)
      stages_[static_cast<size_t>(s)].pending[static_cast<size_t>(to)].push_back(e.src);
  }

  // A two-rank NCCL kernel on one side: it arrives (no time), waits for its peer, then
  // transfers. Returns (arrival, transfer).
  std::pair<uint32_t, uint32_t> meeting_kernel(int s, int role, const KernelOp& op) {
    const uint32_t call = launch_call(s);
    const uint32_t arrive = gpu_node(s, role, name_of(op.name), NodeClass::kComm, 0, call);
    Stage& st = stages_[static_cast<size_t>(s)];
    const auto r = static_cast<size_t>(role);
    const uint32_t xfer =
        node(NodeKind::kKernel, NodeClass::kComm, st.stream[r], s, name_of(op.name), op.dur_us);
    meta(xfer).stream = static_cast<int8_t>(role);
    meta(xfer).slot = slot_id(slot_of(op), NodeClass::kComm);
    count_kernel(role, meta(xfer).slot);
    edge(arrive, xfer, EdgeKind::kIntraStream, 0);
    st.last_gpu[r] = xfer;
    return {arrive, xfer};
  }
  // Both sides have arrived: neither transfers before the later arrival.
  void meet(const MsgEnds& e) {
    const uint32_t rdv =
        node(NodeKind::kVirtual, NodeClass::kVirtual, graph::kNoResource, -1, rendezvous_name(), 0);
    meta(rdv).stage = -1;
    edge(e.send_arrive, rdv, EdgeKind::kCrossRank, 0);
    edge(e.recv_arrive, rdv, EdgeKind::kCrossRank, 0);
    edge(rdv, e.send_transfer, EdgeKind::kCrossRank, 0);
    edge(rdv, e.recv_transfer, EdgeKind::kCrossRank, 0);
  }

  // One side of a pipeline message.
  void p2p(int s, int role, bool recv, int64_t key_dir, int64_t mb, int64_t boundary) {
    if (fold_) {
      // Each side's transfer starts when the later side arrives and takes as long: in a folded
      // graph (never written as a trace) both sides wait for one meeting node and share one
      // transfer, with no arrival nodes.
      MsgEnds& e = messages_[message_index(key_dir, mb, boundary)];
      if (e.meeting == kNone) {
        e.meeting = node(NodeKind::kVirtual, NodeClass::kVirtual, graph::kNoResource, -1,
                         rendezvous_name(), 0);
        meta(e.meeting).stage = -1;
        e.transfer = node(NodeKind::kKernel, NodeClass::kComm,
                          stages_[static_cast<size_t>(s)].stream[static_cast<size_t>(role)], s,
                          name_of(k_.p2p.name), k_.p2p.dur_us);
        meta(e.transfer).stream = static_cast<int8_t>(role);
        meta(e.transfer).slot = slot_id(slot_of(k_.p2p), NodeClass::kComm);
        edge(e.meeting, e.transfer, EdgeKind::kCrossRank, 0);
      }
      enqueue(s, role, e.meeting, launch_call(s));
      // One transfer node serves both sides; both GPUs are busy with it.
      count_kernel(role, meta(e.transfer).slot);
      stages_[static_cast<size_t>(s)].last_gpu[static_cast<size_t>(role)] = e.transfer;
      (recv ? e.recv_arrive : e.send_arrive) = e.meeting;
      return;
    }
    const auto [arrive, xfer] = meeting_kernel(s, role, k_.p2p);
    if (!kCount && !fold_) meta(arrive).comm = p2p_comm(s, recv, key_dir, mb, boundary);
    MsgEnds& e = messages_[message_index(key_dir, mb, boundary)];
    (recv ? e.recv_arrive : e.send_arrive) = arrive;
    (recv ? e.recv_transfer : e.send_transfer) = xfer;
    if (e.send_arrive && e.recv_arrive) meet(e);
  }

  // Tied embeddings: the first stage's embedding and the last stage's output layer are one
  // weight, so their gradients are all-reduced between the two before the optimizer step.
  bool ties_embedding(int s) const { return c_.pp > 1 && pc_.tied && (s == 0 || s == c_.pp - 1); }
  void embedding_allreduce(int s) {
    const auto [arrive, xfer] = meeting_kernel(s, kComputeStream, k_.embedding_allreduce);
    if (!kCount && !fold_)
      meta(arrive).comm = add_comm(s, k_.embedding_allreduce,
                                   "embedding/stage0-stage" + std::to_string(c_.pp - 1), false);
    (s == 0 ? embedding_ends_.send_arrive : embedding_ends_.recv_arrive) = arrive;
    (s == 0 ? embedding_ends_.send_transfer : embedding_ends_.recv_transfer) = xfer;
    if (embedding_ends_.send_arrive && embedding_ends_.recv_arrive) meet(embedding_ends_);
  }
  // A message by direction (0 forward, 1 backward), micro-batch and the virtual stage boundary it
  // crosses; both sides find it here.
  size_t message_index(int64_t key_dir, int64_t mb, int64_t boundary) const {
    return static_cast<size_t>((key_dir * l_.microbatches + mb) * virtual_stages_ + boundary);
  }
  // The NCCL arguments of a pipeline message: Megatron's pipeline group of two neighbouring
  // stages; the message's sequence number is the same on both sides.
  int32_t p2p_comm(int s, bool recv, int64_t key_dir, int64_t mb, int64_t boundary) {
    const int64_t lo = key_dir == 0 ? boundary - 1 : boundary;  // virtual stage sending forward
    const int from_stage = static_cast<int>(lo % c_.pp),
              to_stage = static_cast<int>((lo + 1) % c_.pp);
    const int32_t ci = add_comm(s, k_.p2p,
                                "pp/stage" + std::to_string(from_stage) + "-stage" +
                                    std::to_string(to_stage) + (key_dir == 0 ? "/fwd" : "/bwd"),
                                recv);
    out_.comms[static_cast<size_t>(ci)].seq = mb * (c_.pp * int64_t{c_.interleave}) + boundary;
    return ci;
  }

  // The collectives and the optimizer kernel, priced for their size; a counting pass needs only
  // their number.
  KernelOp grad_reduce(double params) const {
    if constexpr (kCount)
      return {};
    else
      return k_.grad_reduce(params);
  }
  KernelOp param_gather(double params) const {
    if constexpr (kCount)
      return {};
    else
      return k_.param_gather(params);
  }
  KernelOp optimizer(double params) const {
    if constexpr (kCount)
      return {};
    else
      return k_.optimizer(params);
  }

  // A gradient bucket of one model chunk has `params` more parameters; a full bucket (or, with
  // `flush`, the last one) is reduced on the gradient stream after the compute that filled it.
  void grads_ready(int s, Buckets* b, double params, bool flush) {
    b->filled += params;
    if (b->filled >= k_.bucket_params || (flush && b->filled > 0)) {
      if (k_.dp_group > 1) {
        stream_wait(s, kComputeStream, kGradStream);
        kernel(s, kGradStream, grad_reduce(b->filled), Src::kGradReduce, b->filled);
      }
      b->sizes.push_back(b->filled);
      b->filled = 0;
    }
  }

  int64_t layers_of(int64_t virtual_stage) const {
    return l_.chunk_layers[static_cast<size_t>(virtual_stage)];
  }
  // Parameters one GPU of stage s holds: its layers, and the embedding and the head where its
  // model chunks are the first and last virtual stages.
  double stage_params(int s) const {
    double total = 0;
    for (int64_t ch = 0; ch < c_.interleave; ++ch) {
      const int64_t j = ch * c_.pp + s;
      total += layer_params_ * static_cast<double>(layers_of(j));
      if (j == 0) total += embed_params_;
      if (j == last_vs_) total += head_params_;
    }
    return total;
  }

  // One stage's iteration: the parameter gathers of the distributed optimizer, the forward and
  // backward passes in the pipeline schedule's order, then the optimizer step.
  void stage_iteration(int s) {
    stages_[static_cast<size_t>(s)].buckets.resize(static_cast<size_t>(c_.interleave));
    gather_updated_params(s);
    for (const PipelineTask& t : stage_schedule(s, c_.pp, c_.interleave, l_.microbatches)) {
      if (t.forward)
        forward_pass(s, t);
      else
        backward_pass(s, t);
    }
    optimizer_step(s);
  }

  // Distributed optimizer: the parameters the previous step's optimizer updated are gathered
  // back, bucket by bucket, while the forward pass starts (Megatron's overlap_param_gather);
  // a chunk's first forward waits, before each layer, for the buckets that hold it. Buckets cut
  // the chunk's parameters in forward order: embedding, layers, head.
  void gather_updated_params(int s) {
    Stage& st = stages_[static_cast<size_t>(s)];
    st.gathered.resize(static_cast<size_t>(c_.interleave));
    st.gathered_next.assign(static_cast<size_t>(c_.interleave), 0);
    if (!(c_.distributed_optimizer && !c_.fsdp && k_.dp_group > 1)) return;
    for (int64_t ch = 0; ch < c_.interleave; ++ch) {
      const int64_t j = ch * c_.pp + s;
      const double chunk = layer_params_ * static_cast<double>(layers_of(j)) +
                           (j == 0 ? embed_params_ : 0) + (j == last_vs_ ? head_params_ : 0);
      for (double at = 0; at < chunk;) {
        const double b = std::min(chunk - at, k_.bucket_params);
        kernel(s, kGradStream, param_gather(b), Src::kParamGather, b);
        at += b;
        st.gathered[static_cast<size_t>(ch)].push_back({at, record_event(s, kGradStream)});
      }
    }
  }
  // The compute stream waits for the gathered buckets of chunk `ch` that start before parameter
  // offset `upto` (each bucket once).
  void wait_gathered(int s, int64_t ch, double upto) {
    Stage& st = stages_[static_cast<size_t>(s)];
    const auto& list = st.gathered[static_cast<size_t>(ch)];
    size_t& k = st.gathered_next[static_cast<size_t>(ch)];
    while (k < list.size() && (k == 0 || list[k - 1].end < upto))
      wait_event(s, list[k++].done, kComputeStream);
  }

  // FSDP: a layer's weights (with the embedding on the first virtual stage and the head on the
  // last) are gathered before use and its gradients reduce-scattered after its backward.
  double layer_share(int64_t j, int64_t i, int64_t layers) const {
    return layer_params_ + (j == 0 && i == 0 ? embed_params_ : 0) +
           (j == last_vs_ && i == layers - 1 ? head_params_ : 0);
  }
  void fsdp_gather(int s, int64_t j, int64_t i, int64_t layers) {
    const double share = layer_share(j, i, layers);
    kernel(s, kGatherStream, param_gather(share), Src::kParamGather, share);
  }
  // The compute stream waits for the gather just issued, then the next layer's is prefetched.
  void use_gathered(int s, int64_t j, int64_t next, int64_t layers) {
    stream_wait(s, kGatherStream, kComputeStream);
    if (next >= 0 && next < layers) fsdp_gather(s, j, next, layers);
  }
  void fsdp_reduce(int s, int64_t j, int64_t i, int64_t layers) {
    stream_wait(s, kComputeStream, kGradStream);
    const double share = layer_share(j, i, layers);
    kernel(s, kGradStream, grad_reduce(share), Src::kGradReduce, share);
  }

  // A micro-batch's forward pass through one model chunk: receive the activations, embedding
  // (first virtual stage), layers, head (last), send them on.
  void forward_pass(int s, const PipelineTask& t) {
    const int64_t j = int64_t{t.chunk} * c_.pp + s;
    const int64_t layers = layers_of(j);
    if (j > 0) {
      p2p(s, kRecvFwd, true, 0, t.microbatch, j);
      stream_wait(s, kRecvFwd, kComputeStream);
    }
    const double embed_end = j == 0 ? embed_params_ : 0;
    if (fsdp_) fsdp_gather(s, j, 0, layers);
    if (j == 0) {
      if (fsdp_) use_gathered(s, j, 1, layers);
      wait_gathered(s, t.chunk, embed_end);
      kernels(s, k_.embed_fwd);
    }
    const Stage& st = stages_[static_cast<size_t>(s)];
    const auto ch = static_cast<size_t>(t.chunk);
    if (!fsdp_ && st.gathered_next[ch] == st.gathered[ch].size())  // no waits between layers
      layer_run(s, t.microbatch == 0 && first_microbatch_ops_ ? 1 : 0, layers,
                [&] { kernels(s, k_.layer_fwd, t.microbatch == 0); });
    else
      for (int64_t i = 0; i < layers; ++i) {
        if (fsdp_ && !(j == 0 && i == 0)) use_gathered(s, j, i + 1, layers);
        wait_gathered(s, t.chunk, embed_end + layer_params_ * static_cast<double>(i + 1));
        kernels(s, k_.layer_fwd, t.microbatch == 0);
      }
    // Whatever rounding left over in the chunk's last bucket is needed by now too.
    wait_gathered(s, t.chunk, 1e300);
    if (j == last_vs_) kernels(s, k_.head_fwd);
    if (j < last_vs_) {
      stream_wait(s, kComputeStream, kSendFwd);
      p2p(s, kSendFwd, false, 0, t.microbatch, j + 1);
      if (k_.stack->p2p_blocking) stream_wait(s, kSendFwd, kComputeStream);
    }
  }

  // A micro-batch's backward pass through one model chunk, in reverse: receive the gradients,
  // head, layers (recomputed first if so), embedding, send them on. The last micro-batch fills
  // the gradient buckets (FSDP reduce-scatters every layer's gradients instead).
  void backward_pass(int s, const PipelineTask& t) {
    const int64_t j = int64_t{t.chunk} * c_.pp + s;
    const int64_t layers = layers_of(j);
    const bool last_mb = t.microbatch == l_.microbatches - 1;
    Buckets& b = stages_[static_cast<size_t>(s)].buckets[static_cast<size_t>(t.chunk)];
    if (j < last_vs_) {
      p2p(s, kRecvBwd, true, 1, t.microbatch, j);
      stream_wait(s, kRecvBwd, kComputeStream);
    }
    if (fsdp_) fsdp_gather(s, j, layers - 1, layers);
    if (j == last_vs_) {
      if (fsdp_) use_gathered(s, j, layers - 2, layers);
      kernels(s, k_.head_bwd);
      if (last_mb && !fsdp_) grads_ready(s, &b, head_params_, false);
    }
    // Layers that fill no gradient bucket and wait for no gather run one after another.
    int64_t top = layers - 1;
    if (!fsdp_ && !last_mb) {
      const int64_t plain = j == 0 ? std::max<int64_t>(layers - 1, 0)
                                   : layers;  // the first layer adds the embedding's
      layer_run(s, 2, plain, [&] {
        kernels(s, k_.layer_recompute);
        kernels(s, k_.layer_bwd);
      });
      top -= plain;
    }
    for (int64_t i = top; i >= 0; --i) {
      if (fsdp_ && !(j == last_vs_ && i == layers - 1)) use_gathered(s, j, i - 1, layers);
      kernels(s, k_.layer_recompute);
      kernels(s, k_.layer_bwd);
      if (j == 0 && i == 0) kernels(s, k_.embed_bwd);
      if (fsdp_)
        fsdp_reduce(s, j, i, layers);
      else if (last_mb)
        grads_ready(s, &b, layer_params_ + (j == 0 && i == 0 ? embed_params_ : 0), false);
    }
    if (last_mb && !fsdp_) grads_ready(s, &b, 0, true);
    if (j > 0) {
      stream_wait(s, kComputeStream, kSendBwd);
      p2p(s, kSendBwd, false, 1, t.microbatch, j - 1);
      if (k_.stack->p2p_blocking) stream_wait(s, kSendBwd, kComputeStream);
    }
  }

  // The optimizer waits for every gradient bucket and outgoing message, then updates this GPU's
  // shard; the host synchronizes at the end of the iteration.
  void optimizer_step(int s) {
    for (int r : {kGradStream, kGatherStream, kTpStream, kSendFwd, kSendBwd, kRecvFwd, kRecvBwd})
      if (stages_[static_cast<size_t>(s)].last_gpu[static_cast<size_t>(r)] != kNone)
        stream_wait(s, r, kComputeStream);
    if (ties_embedding(s)) embedding_allreduce(s);
    const double params = stage_params(s);
    const double shard = c_.distributed_optimizer || c_.fsdp ? params / k_.dp_group : params;
    const uint32_t last = kernel(s, kComputeStream, optimizer(shard), Src::kOptimizer, shard);
    const uint32_t sync = cpu_call(s, kSyncCall, k_.event_call_us);
    edge(last, sync, EdgeKind::kGpuToCpuSync, 0);
    meta(sync).sync = true;
    stage_end_.push_back(sync);
    steps_[static_cast<size_t>(s)].marker = stages_[static_cast<size_t>(s)].first_cpu;
  }

  StepGraph finish() {
    std::vector<graph::NodeId> id;
    out_.graph = graph::flatten(
        d_, &id, [&](uint32_t n) { return "node '" + names_[d_.nodes[n].name] + "'"; },
        "model-driven step graph");
    graph::Graph& g = out_.graph;
    g.resources = std::move(resources_);
    g.names = std::move(names_);
    g.steps = std::move(steps_);
    for (auto& st : g.steps) st.marker = id[st.marker];
    g.rank = -1;
    g.source = m_.name + " (model-driven)";
    out_.build_index.resize(g.num_nodes());
    for (uint32_t dn = 0; dn < d_.nodes.size(); ++dn) out_.build_index[id[dn]] = dn;
    out_.meta = std::move(meta_);
    for (uint32_t e : stage_end_) out_.stage_end.push_back(id[e]);
    return std::move(out_);
  }

  const ModelSpec& m_;
  const ParallelConfig& c_;
  const Layout& l_;
  const StepCosts& k_;
  const ParamCounts pc_ = parameter_counts(m_, l_.padded_vocab);
  const int64_t virtual_stages_ = int64_t{c_.pp} * c_.interleave;
  const int64_t last_vs_ = virtual_stages_ - 1;
  // Parameters one GPU holds of a layer, of the embedding (first virtual stage) and of the final
  // norm and output layer (last virtual stage).
  const double layer_params_ = static_cast<double>(pc_.per_layer) / c_.tp;
  const double embed_params_ = static_cast<double>(pc_.embedding - l_.padded_vocab * m_.hidden) +
                               static_cast<double>(l_.padded_vocab * m_.hidden) / c_.tp;
  const double head_params_ =
      static_cast<double>(pc_.final_norm) +
      (!pc_.tied || c_.pp > 1 ? static_cast<double>(pc_.output) / c_.tp : 0.0);
  const bool fsdp_ = c_.fsdp && k_.dp_group > 1;
  const bool fold_;
  // Whether the first micro-batch's forward layers run more ops (another kind of folded run).
  const bool first_microbatch_ops_ =
      std::any_of(k_.layer_fwd.begin(), k_.layer_fwd.end(),
                  [](const KernelOp& op) { return op.first_microbatch_only; });
  uint32_t fold_name_ = kNone;
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
};

}  // namespace

StepGraphCount count_step_graph(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                                const StepCosts& costs, uint64_t stop_above, bool fold_layers) {
  try {
    return Builder<Pass::kCount>(m, c, l, costs, fold_layers).count(stop_above);
  } catch (const CountLimitReached&) {
    StepGraphCount over;
    over.nodes = stop_above + 1;
    return over;
  }
}

uint64_t step_graph_size(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                         const StepCosts& costs, uint64_t stop_above, bool fold_layers) {
  return count_step_graph(m, c, l, costs, stop_above, fold_layers).nodes;
}

StepGraph build_step_graph(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                           const StepCosts& costs, uint64_t max_nodes, bool fold_layers,
                           const StepGraphCount* counted) {
  return Builder<Pass::kBuild>(m, c, l, costs, fold_layers).build(max_nodes, counted);
}

std::vector<uint32_t> StepGraph::node_slots() const {
  std::vector<uint32_t> out(graph.num_nodes(), UINT32_MAX);
  for (graph::NodeId n = 0; n < graph.num_nodes(); ++n)
    if (meta_of(n).slot >= 0) out[n] = static_cast<uint32_t>(meta_of(n).slot);
  return out;
}

std::vector<double> model_slot_durations(const StepGraph& g, const StepCosts& costs,
                                         const ClassSpeeds& speed) {
  std::vector<double> out;
  out.reserve(g.slots.size());
  for (const ModelSlot& slot : g.slots) {
    const std::vector<KernelOp>* list = nullptr;
    switch (slot.source) {
      case Src::kLayerFwd:
        list = &costs.layer_fwd;
        break;
      case Src::kLayerBwd:
        list = &costs.layer_bwd;
        break;
      case Src::kLayerRecompute:
        list = &costs.layer_recompute;
        break;
      case Src::kEmbedFwd:
        list = &costs.embed_fwd;
        break;
      case Src::kEmbedBwd:
        list = &costs.embed_bwd;
        break;
      case Src::kHeadFwd:
        list = &costs.head_fwd;
        break;
      case Src::kHeadBwd:
        list = &costs.head_bwd;
        break;
      case Src::kP2p:
        out.push_back(costs.p2p.dur_us);
        continue;
      case Src::kEmbeddingAllreduce:
        out.push_back(costs.embedding_allreduce.dur_us);
        continue;
      case Src::kGradReduce:
        out.push_back(costs.grad_reduce(slot.params).dur_us);
        continue;
      case Src::kParamGather:
        out.push_back(costs.param_gather(slot.params).dur_us);
        continue;
      case Src::kOptimizer:
        out.push_back(costs.optimizer(slot.params).dur_us);
        continue;
      case Src::kFolded:
        out.push_back(0);  // below
        continue;
    }
    LUMOS_EXPECT(list && slot.index < list->size(),
                 "model slots: the costs have another structure than the graph's");
    out.push_back((*list)[slot.index].dur_us);
  }
  for (size_t s = 0; s < out.size(); ++s) out[s] /= static_cast<double>(speed[g.slot_class[s]]);
  fold_slot_durations(g, speed, &out);
  return out;
}

namespace {

constexpr int kK = LayerFold::kFrontier;
using FoldMatrix = std::array<std::array<double, kK>, kK>;
constexpr double kNoPath = -std::numeric_limits<double>::infinity();

// Max-plus product: (a b)[i][j] = max over m of a[i][m] + b[m][j].
FoldMatrix max_plus(const FoldMatrix& a, const FoldMatrix& b) {
  FoldMatrix c;
  for (int i = 0; i < kK; ++i)
    for (int j = 0; j < kK; ++j) {
      double best = kNoPath;
      for (int m = 0; m < kK; ++m) best = std::max(best, a[i][m] + b[m][j]);
      c[i][j] = best;
    }
  return c;
}

FoldMatrix max_plus_power(FoldMatrix a, int64_t n) {
  FoldMatrix r;
  for (int i = 0; i < kK; ++i)
    for (int j = 0; j < kK; ++j) r[i][j] = i == j ? 0.0 : kNoPath;
  for (; n > 0; n >>= 1) {
    if (n & 1) r = max_plus(r, a);
    if (n > 1) a = max_plus(a, a);
  }
  return r;
}

}  // namespace

void fold_slot_durations(const StepGraph& g, const ClassSpeeds& speed,
                         std::vector<double>* slot_us) {
  if (g.folds.empty()) return;
  std::vector<FoldMatrix> run(g.folds.size());
  std::vector<double> finish;
  for (size_t fi = 0; fi < g.folds.size(); ++fi) {
    const LayerFold& f = g.folds[fi];
    FoldMatrix one;
    finish.resize(f.nodes.size());
    for (int i = 0; i < kK; ++i) {
      // The layer replayed from frontier entry i alone (as the replay: start at the latest
      // predecessor's finish plus the edge's lag).
      std::fill(finish.begin(), finish.end(), kNoPath);
      finish[static_cast<size_t>(i)] = 0;
      for (size_t n = kK; n < f.nodes.size(); ++n) {
        double start = kNoPath;
        for (uint32_t e = f.edge_begin[n]; e < f.edge_begin[n + 1]; ++e)
          start = std::max(start, finish[f.edge_src[e]] + f.edge_lag_us[e]);
        if (start == kNoPath) continue;
        const LayerFold::Node& node = f.nodes[n];
        finish[n] =
            start + (node.slot >= 0 ? (*slot_us)[static_cast<size_t>(node.slot)]
                                    : node.dur_us * (1.0 / static_cast<double>(speed[node.cls])));
      }
      for (int j = 0; j < kK; ++j) {
        double latest = kNoPath;
        for (uint32_t o : f.outputs[static_cast<size_t>(j)]) latest = std::max(latest, finish[o]);
        one[i][j] = latest;
      }
    }
    run[fi] = max_plus_power(one, f.layers);
  }
  for (size_t s = 0; s < g.slots.size(); ++s)
    if (g.slots[s].source == Src::kFolded) {
      const auto entry = static_cast<int>(g.slots[s].params);
      (*slot_us)[s] =
          run[g.slots[s].index][static_cast<size_t>(entry / kK)][static_cast<size_t>(entry % kK)];
    }
}

double compute_busy_us(const StepGraph& g, const std::vector<double>& slot_us) {
  double busy = 0;
  for (size_t s = 0; s < g.compute_kernels.size(); ++s)
    busy += static_cast<double>(g.compute_kernels[s]) * slot_us[s];
  return busy;
}

KernelBusy kernel_busy_us(const StepGraph& g, const std::vector<double>& slot_us) {
  KernelBusy b;
  for (size_t s = 0; s < g.gpu_kernels.size(); ++s) {
    const double us = static_cast<double>(g.gpu_kernels[s]) * slot_us[s];
    switch (g.slot_power[s]) {
      case PowerClass::kComputeBound:
        b.compute_bound_us += us;
        break;
      case PowerClass::kMemoryBound:
        b.memory_bound_us += us;
        break;
      case PowerClass::kComm:
        b.comm_us += us;
        break;
    }
  }
  return b;
}

bool same_structure(const StepCosts& a, const StepCosts& b) {
  auto same_op = [](const KernelOp& x, const KernelOp& y) {
    return x.name == y.name && x.group == y.group && x.collective == y.collective &&
           x.nelems == y.nelems && x.out_nelems == y.out_nelems && x.group_size == y.group_size &&
           x.side == y.side && x.fork == y.fork && x.join == y.join &&
           x.first_microbatch_only == y.first_microbatch_only && x.model_flops == y.model_flops &&
           x.hw_flops == y.hw_flops && x.gemm.has_value() == y.gemm.has_value();
  };
  auto same_list = [&](const std::vector<KernelOp>& x, const std::vector<KernelOp>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_op(x[i], y[i])) return false;
    return true;
  };
  return same_list(a.layer_fwd, b.layer_fwd) && same_list(a.layer_bwd, b.layer_bwd) &&
         same_list(a.layer_recompute, b.layer_recompute) && same_list(a.embed_fwd, b.embed_fwd) &&
         same_list(a.embed_bwd, b.embed_bwd) && same_list(a.head_fwd, b.head_fwd) &&
         same_list(a.head_bwd, b.head_bwd) && same_op(a.p2p, b.p2p) &&
         same_op(a.embedding_allreduce, b.embedding_allreduce) &&
         a.cpu_launch_us == b.cpu_launch_us && a.launch_latency_us == b.launch_latency_us &&
         a.event_call_us == b.event_call_us && a.stack == b.stack &&
         a.grad_reduce_bytes == b.grad_reduce_bytes && a.bucket_params == b.bucket_params &&
         a.dp_group == b.dp_group && a.dp_ranks_per_node == b.dp_ranks_per_node &&
         a.distributed_optimizer == b.distributed_optimizer;
}

}  // namespace lumos::model
