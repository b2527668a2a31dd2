#include "model/step_graph.hpp"

#include <algorithm>
#include <array>
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

struct Stage {
  uint32_t thread = 0;
  std::array<uint32_t, kNumStreams> stream{};
  uint32_t last_cpu = kNone, first_cpu = kNone;
  uint32_t launch_group = kNone, launches = 0;  // open run of launch calls (see launch_call)
  std::vector<std::pair<uint32_t, uint32_t>> launch_edges;   // (edge, k) of the open run
  std::array<uint32_t, kNumStreams> last_gpu{};              // last GPU node (its end) per stream
  std::array<std::vector<uint32_t>, kNumStreams> pending{};  // inter-stream waits for the next op
  std::array<int64_t, 5> seq{};           // next NCCL sequence number, by CommGroup
  std::array<std::string, 5> group_name;  // "tp/stage3", ... by CommGroup
};

class Builder {
 public:
  Builder(const ModelSpec& m, const ParallelConfig& c, const Layout& l, const StepCosts& k)
      : m_(m), c_(c), l_(l), k_(k) {}

  StepGraph build(uint64_t max_nodes) {
    const uint64_t expect = step_graph_size(c_, l_, k_);
    if (expect > max_nodes)
      throw InputError("the iteration has about " + std::to_string(expect) +
                       " kernels and calls, above the limit of " + std::to_string(max_nodes) +
                       " (fewer micro-batches or layers, or a larger --mbs)");
    d_.nodes.reserve(expect + 16);
    d_.edges.reserve(expect * 2 + 16);
    d_.nodes.push_back({});
    meta_.reserve(expect + 16);
    meta_.emplace_back();
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
    for (int s = 0; s < c_.pp; ++s) stage_iteration(s);
    for (const auto& [key, ends] : messages_)
      if (!ends.send_arrive || !ends.recv_arrive)
        throw std::logic_error("step graph: unmatched pipeline message");
    return finish();
  }

 private:
  struct MsgEnds {
    uint32_t send_arrive = kNone, send_transfer = kNone;
    uint32_t recv_arrive = kNone, recv_transfer = kNone;
  };

  uint32_t add_resource(graph::Resource r) {
    resources_.push_back(r);
    return static_cast<uint32_t>(resources_.size() - 1);
  }
  uint32_t intern(const std::string& s) {
    auto it = name_id_.find(s);
    if (it != name_id_.end()) return it->second;
    names_.push_back(s);
    return name_id_[s] = static_cast<uint32_t>(names_.size() - 1);
  }
  // Names of the ops in StepCosts and of the runtime calls, interned once by address: hashing a
  // string per node was a tenth of the build.
  uint32_t name_of(const std::string& name) {
    auto it = name_by_address_.find(&name);
    if (it != name_by_address_.end()) return it->second;
    return name_by_address_[&name] = intern(name);
  }
  uint32_t node(NodeKind kind, NodeClass cls, uint32_t res, int s, const std::string& name,
                double dur) {
    return node(kind, cls, res, s, intern(name), dur);
  }
  uint32_t node(NodeKind kind, NodeClass cls, uint32_t res, int s, uint32_t name, double dur) {
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
  void edge(uint32_t src, uint32_t dst, EdgeKind kind, double lag) {
    d_.edges.push_back({src, dst, kind, lag});
  }

  // A runtime call on the stage's thread, after the previous one.
  uint32_t cpu_call(int s, const std::string& name, double dur) {
    close_launches(s);
    return new_call(s, name, dur);
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
      st.launch_group = new_call(s, kLaunchCall, k_.cpu_launch_us);
      st.launches = 1;
    } else {
      d_.nodes[st.launch_group].dur_us += k_.cpu_launch_us;
      ++st.launches;
    }
    return st.launch_group;
  }
  void close_launches(int s) {
    Stage& st = stages_[static_cast<size_t>(s)];
    for (const auto& [e, k] : st.launch_edges)
      d_.edges[e].lag_us =
          k_.launch_latency_us - static_cast<double>(st.launches - 1 - k) * k_.cpu_launch_us;
    st.launch_edges.clear();
    st.launch_group = kNone;
    st.launches = 0;
  }

  // Launches a GPU node on a stream: after its launch call, the stream's previous op and any
  // inter-stream waits queued for the stream.
  uint32_t gpu_node(int s, int role, uint32_t name, NodeClass cls, double dur, uint32_t launch) {
    Stage& st = stages_[static_cast<size_t>(s)];
    const auto r = static_cast<size_t>(role);
    const uint32_t id = node(NodeKind::kKernel, cls, st.stream[r], s, name, dur);
    meta_[id].stream = static_cast<int8_t>(role);
    st.launch_edges.push_back({static_cast<uint32_t>(d_.edges.size()), st.launches - 1});
    edge(launch, id, EdgeKind::kLaunch, k_.launch_latency_us);
    if (st.last_gpu[r] != kNone) edge(st.last_gpu[r], id, EdgeKind::kIntraStream, 0);
    for (uint32_t w : st.pending[r]) edge(w, id, EdgeKind::kInterStream, 0);
    st.pending[r].clear();
    st.last_gpu[r] = id;
    return id;
  }

  int32_t add_comm(int s, const KernelOp& op, const std::string& group, bool recv) {
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
    const auto key = std::make_tuple(q.m, q.n, q.k, q.batch, static_cast<int>(q.dtype));
    auto [it, fresh] = gemm_of_.emplace(key, static_cast<int32_t>(out_.gemms.size()));
    if (fresh) out_.gemms.push_back(q);
    return it->second;
  }

  // `op` lives in StepCosts (its name is interned by address) unless `temporary`.
  uint32_t kernel(int s, int role, const KernelOp& op, bool temporary = false) {
    const uint32_t call = launch_call(s);
    const uint32_t id =
        gpu_node(s, role, temporary ? intern(op.name) : name_of(op.name),
                 op.comm() ? NodeClass::kComm : NodeClass::kCompute, op.dur_us, call);
    meta_[id].model_flops = op.model_flops;
    meta_[id].hw_flops = op.hw_flops;
    if (op.gemm) meta_[id].gemm = gemm_index(*op.gemm);
    if (op.comm())
      meta_[id].comm = add_comm(
          s, op, stages_[static_cast<size_t>(s)].group_name[static_cast<size_t>(op.group)], false);
    return id;
  }
  void kernels(int s, const std::vector<KernelOp>& ops, bool first_microbatch = false) {
    for (const auto& op : ops) {
      if (op.first_microbatch_only && !first_microbatch) continue;
      if (op.join) stream_wait(s, kTpStream, kComputeStream);
      if (op.side && op.fork) stream_wait(s, kComputeStream, kTpStream);
      kernel(s, op.side ? kTpStream : kComputeStream, op);
    }
  }

  // cudaEventRecord after the last op on `from`, cudaStreamWaitEvent on `to`: the next op on
  // `to` waits for it.
  void stream_wait(int s, int from, int to) { wait_event(s, record_event(s, from), to); }

  // A recorded CUDA event: the call that recorded it and the GPU op it marks (the last one on its
  // stream then).
  struct Event {
    uint32_t call = kNone, src = kNone;
    int from = 0;
  };
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
    meta_[wait].waits_on = static_cast<int8_t>((to << 4) | e.from);
    meta_[wait].record = e.call;
    if (e.src != kNone)
      stages_[static_cast<size_t>(s)].pending[static_cast<size_t>(to)].push_back(e.src);
  }

  // One side of a pipeline message: the NCCL kernel arrives, meets its peer, then transfers.
  void p2p(int s, int role, bool recv, int64_t key_dir, int64_t mb, int64_t boundary) {
    const uint32_t call = launch_call(s);
    const std::string& name = k_.p2p.name;
    const uint32_t arrive = gpu_node(s, role, name_of(name), NodeClass::kComm, 0, call);
    Stage& st = stages_[static_cast<size_t>(s)];
    const auto r = static_cast<size_t>(role);
    const uint32_t xfer =
        node(NodeKind::kKernel, NodeClass::kComm, st.stream[r], s, name, k_.p2p.dur_us);
    meta_[xfer].stream = static_cast<int8_t>(role);
    edge(arrive, xfer, EdgeKind::kIntraStream, 0);
    st.last_gpu[r] = xfer;
    // Megatron's pipeline group of two neighbouring stages; the message's sequence number is the
    // same on both sides.
    const int64_t lo = key_dir == 0 ? boundary - 1 : boundary;  // virtual stage sending forward
    const int from_stage = static_cast<int>(lo % c_.pp),
              to_stage = static_cast<int>((lo + 1) % c_.pp);
    KernelOp op = k_.p2p;
    const int32_t ci = add_comm(s, op,
                                "pp/stage" + std::to_string(from_stage) + "-stage" +
                                    std::to_string(to_stage) + (key_dir == 0 ? "/fwd" : "/bwd"),
                                recv);
    out_.comms[static_cast<size_t>(ci)].seq = mb * (c_.pp * int64_t{c_.interleave}) + boundary;
    meta_[arrive].comm = ci;
    MsgEnds& e = messages_[{key_dir, mb, boundary}];
    (recv ? e.recv_arrive : e.send_arrive) = arrive;
    (recv ? e.recv_transfer : e.send_transfer) = xfer;
    if (e.send_arrive && e.recv_arrive) {
      const uint32_t rdv = node(NodeKind::kVirtual, NodeClass::kVirtual, graph::kNoResource, -1,
                                "rendezvous " + name, 0);
      meta_[rdv].stage = -1;
      edge(e.send_arrive, rdv, EdgeKind::kCrossRank, 0);
      edge(e.recv_arrive, rdv, EdgeKind::kCrossRank, 0);
      edge(rdv, e.send_transfer, EdgeKind::kCrossRank, 0);
      edge(rdv, e.recv_transfer, EdgeKind::kCrossRank, 0);
    }
  }

  // Gradient buckets of one model chunk, filled in backward order (head, layers last to first,
  // embedding), each reduced as soon as it is complete.
  struct Buckets {
    double filled = 0;
    std::vector<double> sizes;  // params of each launched bucket
  };
  void grads_ready(int s, Buckets* b, double params, bool flush) {
    b->filled += params;
    if (b->filled >= k_.bucket_params || (flush && b->filled > 0)) {
      if (k_.dp_group > 1) {
        stream_wait(s, kComputeStream, kGradStream);
        kernel(s, kGradStream, k_.grad_reduce(b->filled), true);
      }
      b->sizes.push_back(b->filled);
      b->filled = 0;
    }
  }

  void stage_iteration(int s) {
    const int64_t p = c_.pp, v = c_.interleave, m = l_.microbatches;
    const int64_t last_vs = p * v - 1;
    const double layer_params = static_cast<double>(pc_.per_layer) / c_.tp;
    const double embed_params = static_cast<double>(pc_.embedding - l_.padded_vocab * m_.hidden) +
                                static_cast<double>(l_.padded_vocab * m_.hidden) / c_.tp;
    const double head_params =
        static_cast<double>(pc_.final_norm) +
        (!pc_.tied || c_.pp > 1 ? static_cast<double>(pc_.output) / c_.tp : 0.0);
    double stage_params = 0;
    for (int64_t ch = 0; ch < v; ++ch) {
      const int64_t j = ch * p + s;
      stage_params += layer_params * static_cast<double>(l_.chunk_layers[static_cast<size_t>(j)]);
      if (j == 0) stage_params += embed_params;
      if (j == last_vs) stage_params += head_params;
    }
    // Distributed optimizer: the parameters the previous step's optimizer updated are gathered
    // back, bucket by bucket, while the forward pass starts (Megatron's overlap_param_gather);
    // a chunk's first forward waits, before each layer, for the buckets that hold it. Buckets cut
    // the chunk's parameters in forward order: embedding, layers, head.
    struct Gathered {
      double end = 0;  // parameter offset where the bucket ends
      Event done;
    };
    std::vector<std::vector<Gathered>> gathered(static_cast<size_t>(v));
    std::vector<size_t> gathered_next(static_cast<size_t>(v), 0);
    if (c_.distributed_optimizer && !c_.fsdp && k_.dp_group > 1)
      for (int64_t ch = 0; ch < v; ++ch) {
        const int64_t j = ch * p + s;
        const double chunk =
            layer_params * static_cast<double>(l_.chunk_layers[static_cast<size_t>(j)]) +
            (j == 0 ? embed_params : 0) + (j == last_vs ? head_params : 0);
        for (double at = 0; at < chunk;) {
          const double b = std::min(chunk - at, k_.bucket_params);
          kernel(s, kGradStream, k_.param_gather(b), true);
          at += b;
          gathered[static_cast<size_t>(ch)].push_back({at, record_event(s, kGradStream)});
        }
      }
    // Waits for the buckets of chunk `ch` that start before parameter offset `upto`.
    auto wait_gathered = [&](int64_t ch, double upto) {
      auto& list = gathered[static_cast<size_t>(ch)];
      size_t& k = gathered_next[static_cast<size_t>(ch)];
      while (k < list.size() && (k == 0 || list[k - 1].end < upto))
        wait_event(s, list[k++].done, kComputeStream);
    };
    const bool fsdp = c_.fsdp && k_.dp_group > 1;
    // FSDP: a layer's weights (with the embedding on the first virtual stage and the head on the
    // last) are gathered before use and its gradients reduce-scattered after its backward.
    auto layer_share = [&](int64_t j, int64_t i, int64_t layers) {
      return layer_params + (j == 0 && i == 0 ? embed_params : 0) +
             (j == last_vs && i == layers - 1 ? head_params : 0);
    };
    auto gather = [&](int64_t j, int64_t i, int64_t layers) {
      kernel(s, kGatherStream, k_.param_gather(layer_share(j, i, layers)), true);
    };
    // The compute stream waits for the gather just issued, then the next layer's is prefetched.
    auto use_gathered = [&](int64_t j, int64_t next, int64_t layers) {
      stream_wait(s, kGatherStream, kComputeStream);
      if (next >= 0 && next < layers) gather(j, next, layers);
    };
    std::vector<Buckets> buckets(static_cast<size_t>(v));
    for (const PipelineTask& t : stage_schedule(s, c_.pp, c_.interleave, m)) {
      const int64_t j = t.chunk * p + s;
      const int64_t layers = l_.chunk_layers[static_cast<size_t>(j)];
      const bool last_mb = t.microbatch == m - 1;
      if (t.forward) {
        if (j > 0) {
          p2p(s, kRecvFwd, true, 0, t.microbatch, j);
          stream_wait(s, kRecvFwd, kComputeStream);
        }
        const double embed_end = j == 0 ? embed_params : 0;
        if (fsdp) gather(j, 0, layers);
        if (j == 0) {
          if (fsdp) use_gathered(j, 1, layers);
          wait_gathered(t.chunk, embed_end);
          kernels(s, k_.embed_fwd);
        }
        for (int64_t i = 0; i < layers; ++i) {
          if (fsdp && !(j == 0 && i == 0)) use_gathered(j, i + 1, layers);
          wait_gathered(t.chunk, embed_end + layer_params * static_cast<double>(i + 1));
          kernels(s, k_.layer_fwd, t.microbatch == 0);
        }
        // Whatever rounding left over in the chunk's last bucket is needed by now too.
        wait_gathered(t.chunk, 1e300);
        if (j == last_vs) kernels(s, k_.head_fwd);
        if (j < last_vs) {
          stream_wait(s, kComputeStream, kSendFwd);
          p2p(s, kSendFwd, false, 0, t.microbatch, j + 1);
        }
      } else {
        Buckets& b = buckets[static_cast<size_t>(t.chunk)];
        if (j < last_vs) {
          p2p(s, kRecvBwd, true, 1, t.microbatch, j);
          stream_wait(s, kRecvBwd, kComputeStream);
        }
        if (fsdp) gather(j, layers - 1, layers);
        if (j == last_vs) {
          if (fsdp) use_gathered(j, layers - 2, layers);
          kernels(s, k_.head_bwd);
          if (last_mb && !fsdp) grads_ready(s, &b, head_params, false);
        }
        for (int64_t i = layers - 1; i >= 0; --i) {
          if (fsdp && !(j == last_vs && i == layers - 1)) use_gathered(j, i - 1, layers);
          kernels(s, k_.layer_recompute);
          kernels(s, k_.layer_bwd);
          if (j == 0 && i == 0) kernels(s, k_.embed_bwd);
          if (fsdp) {
            stream_wait(s, kComputeStream, kGradStream);
            kernel(s, kGradStream, k_.grad_reduce(layer_share(j, i, layers)), true);
          } else if (last_mb) {
            grads_ready(s, &b, layer_params + (j == 0 && i == 0 ? embed_params : 0), false);
          }
        }
        if (last_mb && !fsdp) grads_ready(s, &b, 0, true);
        if (j > 0) {
          stream_wait(s, kComputeStream, kSendBwd);
          p2p(s, kSendBwd, false, 1, t.microbatch, j - 1);
        }
      }
    }
    // The optimizer waits for every gradient bucket and outgoing message, then updates this
    // GPU's shard; the host synchronizes at the end of the iteration.
    for (int r : {kGradStream, kGatherStream, kTpStream, kSendFwd, kSendBwd, kRecvFwd, kRecvBwd})
      if (stages_[static_cast<size_t>(s)].last_gpu[static_cast<size_t>(r)] != kNone)
        stream_wait(s, r, kComputeStream);
    const double shard =
        c_.distributed_optimizer || c_.fsdp ? stage_params / k_.dp_group : stage_params;
    const uint32_t last = kernel(s, kComputeStream, k_.optimizer(shard), true);
    const uint32_t sync = cpu_call(s, kSyncCall, k_.event_call_us);
    edge(last, sync, EdgeKind::kGpuToCpuSync, 0);
    meta_[sync].sync = true;
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
  graph::Draft d_;
  std::vector<graph::Resource> resources_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_id_;
  std::unordered_map<const std::string*, uint32_t> name_by_address_;
  std::vector<graph::Step> steps_;
  std::vector<Stage> stages_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, MsgEnds> messages_;
  std::vector<StepGraph::NodeMeta> meta_;  // per draft node
  std::vector<uint32_t> stage_end_;
  StepGraph out_;
};

}  // namespace

uint64_t step_graph_size(const ParallelConfig& c, const Layout& l, const StepCosts& k) {
  // Each kernel is two nodes (launch call and kernel); each pipeline message eleven (per side:
  // two calls for the stream wait, the launch call, arrival and transfer; and the rendezvous).
  uint64_t per_pass = 0;
  const uint64_t layers_total = [&] {
    uint64_t n = 0;
    for (int64_t x : l.chunk_layers) n += static_cast<uint64_t>(x);
    return n;
  }();
  // Two nodes per kernel, two more per stream wait it needs; FSDP adds a gather (and its wait)
  // per layer pass and a reduce-scatter (and its wait) per layer backward.
  auto nodes = [](const std::vector<KernelOp>& ops) {
    uint64_t n = 0;
    for (const auto& op : ops) n += 2 + (op.join ? 2 : 0) + (op.side && op.fork ? 2 : 0);
    return n;
  };
  const uint64_t fsdp = c.fsdp ? 12 : 0;
  per_pass =
      (nodes(k.layer_fwd) + nodes(k.layer_bwd) + nodes(k.layer_recompute) + fsdp) * layers_total +
      nodes(k.embed_fwd) + nodes(k.embed_bwd) + nodes(k.head_fwd) + nodes(k.head_bwd);
  const auto m = static_cast<uint64_t>(l.microbatches);
  const uint64_t messages = 2 * 11 * static_cast<uint64_t>(l.chunk_layers.size()) * m;
  return per_pass * m + messages +
         64 * static_cast<uint64_t>(c.pp) * static_cast<uint64_t>(c.interleave) + 16;
}

StepGraph build_step_graph(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                           const StepCosts& costs, uint64_t max_nodes) {
  return Builder(m, c, l, costs).build(max_nodes);
}

}  // namespace lumos::model
