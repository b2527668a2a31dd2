// The nodes and edges a stage's iteration is made of: runtime calls on its CPU thread, launches,
// kernels on its streams, CUDA events between streams, and the two-rank NCCL kernels (pipeline
// messages, the tied embedding's all-reduce) that meet their peer at a rendezvous.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/step_graph_builder.hpp"

namespace lumos::model::detail {

namespace {

// Kineto's "Collective name" of an NCCL kernel.
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

}  // namespace

// A runtime call on the stage's thread, after the previous one.
template <Pass P>
uint32_t Builder<P>::cpu_call(int s, const std::string& name, double dur) {
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

template <Pass P>
uint32_t Builder<P>::new_call(int s, const std::string& name, double dur) {
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
template <Pass P>
uint32_t Builder<P>::launch_call(int s) {
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

template <Pass P>
void Builder<P>::close_launches(int s) {
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
template <Pass P>
uint32_t Builder<P>::gpu_node(int s, int role, uint32_t name, NodeClass cls, double dur,
                              uint32_t launch) {
  Stage& st = stages_[static_cast<size_t>(s)];
  const auto r = static_cast<size_t>(role);
  const uint32_t id = node(NodeKind::kKernel, cls, st.stream[r], s, name, dur);
  meta(id).stream = static_cast<int8_t>(role);
  enqueue(s, role, id, launch);
  return id;
}

// What a GPU op on `role` waits for: its launch, the stream's previous op, queued waits.
template <Pass P>
void Builder<P>::enqueue(int s, int role, uint32_t id, uint32_t launch) {
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
template <Pass P>
int32_t Builder<P>::add_comm(int s, const KernelOp& op, const std::string& group, bool recv) {
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

template <Pass P>
int32_t Builder<P>::gemm_index(const cost::GemmQuery& q) {
  if constexpr (kCount) return -1;
  const auto key = std::make_tuple(q.m, q.n, q.k, q.batch, static_cast<int>(q.dtype), q.fprop);
  auto [it, fresh] = gemm_of_.try_emplace(key, static_cast<int32_t>(out_.gemms.size()));
  if (fresh) out_.gemms.push_back(q);
  return it->second;
}

// A kernel priced from `op`, an op of StepCosts (its name is interned by address; its slot is
// its place in StepCosts).
template <Pass P>
uint32_t Builder<P>::kernel(int s, int role, const KernelOp& op) {
  const uint32_t id = kernel_node(s, role, op, name_of(op.name));
  if constexpr (!kCount) {
    auto [it, fresh] = slot_by_address_.try_emplace(&op, 0);
    if (fresh) it->second = slot_id(slot_of(op), class_of(op), power_of(op));
    meta(id).slot = it->second;
  }
  count_kernel(role, meta(id).slot);
  return id;
}

// A kernel priced for its size, the parameters of ParamPlan site `site` (a gradient reduction, a
// parameter gather, the optimizer step): `op` is a temporary. Its slot is keyed by the count, so
// that kernels of one size share it.
template <Pass P>
uint32_t Builder<P>::kernel(int s, int role, const KernelOp& op, Src source, uint32_t site) {
  const uint32_t id = kernel_node(s, role, op, intern(op.name));
  meta(id).slot = slot_id({source, 0, params_.value[site]}, class_of(op), power_of(op), site);
  count_kernel(role, meta(id).slot);
  return id;
}

template <Pass P>
uint32_t Builder<P>::kernel_node(int s, int role, const KernelOp& op, uint32_t name) {
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

template <Pass P>
void Builder<P>::kernels(int s, const std::vector<KernelOp>& ops, bool first_microbatch,
                         bool defer) {
  for (const auto& op : ops) {
    if (op.first_microbatch_only && !first_microbatch) continue;
    if (op.deferrable && defer) continue;
    if (op.join) stream_wait(s, kTpStream, kComputeStream);
    if (op.side && op.fork) stream_wait(s, kComputeStream, kTpStream);
    kernel(s, op.side ? kTpStream : kComputeStream, op);
  }
}

// cudaEventRecord after the last op on `from`, cudaStreamWaitEvent on `to`: the next op on
// `to` waits for it.
template <Pass P>
void Builder<P>::stream_wait(int s, int from, int to) {
  wait_event(s, record_event(s, from), to);
}

template <Pass P>
Event Builder<P>::record_event(int s, int from) {
  Stage& st = stages_[static_cast<size_t>(s)];
  Event e;
  e.src = st.last_gpu[static_cast<size_t>(from)];
  e.call = cpu_call(s, kRecordCall, k_.event_call_us);
  e.from = from;
  return e;
}

template <Pass P>
void Builder<P>::wait_event(int s, const Event& e, int to) {
  const uint32_t wait = cpu_call(s, kWaitCall, k_.event_call_us);
  meta(wait).waits_on = static_cast<int8_t>((to << 4) | e.from);
  meta(wait).record = e.call;
  if (e.src != kNone)
    stages_[static_cast<size_t>(s)].pending[static_cast<size_t>(to)].push_back(e.src);
}

// A two-rank NCCL kernel on one side: it arrives (no time), waits for its peer, then
// transfers. Returns (arrival, transfer).
template <Pass P>
std::pair<uint32_t, uint32_t> Builder<P>::meeting_kernel(int s, int role, const KernelOp& op) {
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
template <Pass P>
void Builder<P>::meet(const MsgEnds& e) {
  const uint32_t rdv =
      node(NodeKind::kVirtual, NodeClass::kVirtual, graph::kNoResource, -1, rendezvous_name(), 0);
  meta(rdv).stage = -1;
  edge(e.send_arrive, rdv, EdgeKind::kCrossRank, 0);
  edge(e.recv_arrive, rdv, EdgeKind::kCrossRank, 0);
  edge(rdv, e.send_transfer, EdgeKind::kCrossRank, 0);
  edge(rdv, e.recv_transfer, EdgeKind::kCrossRank, 0);
}

// One side of a pipeline message.
template <Pass P>
void Builder<P>::p2p(int s, int role, bool recv, int64_t key_dir, int64_t mb, int64_t boundary) {
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

// The NCCL arguments of a pipeline message: Megatron's pipeline group of two neighbouring
// stages; the message's sequence number is the same on both sides.
template <Pass P>
int32_t Builder<P>::p2p_comm(int s, bool recv, int64_t key_dir, int64_t mb, int64_t boundary) {
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

// One side of the tied embedding's all-reduce (see ties_embedding): the first stage "sends", the
// last "receives".
template <Pass P>
void Builder<P>::embedding_allreduce(int s) {
  const auto [arrive, xfer] = meeting_kernel(s, kComputeStream, k_.embedding_allreduce);
  if (!kCount && !fold_)
    meta(arrive).comm = add_comm(s, k_.embedding_allreduce,
                                 "embedding/stage0-stage" + std::to_string(c_.pp - 1), false);
  (s == 0 ? embedding_ends_.send_arrive : embedding_ends_.recv_arrive) = arrive;
  (s == 0 ? embedding_ends_.send_transfer : embedding_ends_.recv_transfer) = xfer;
  if (embedding_ends_.send_arrive && embedding_ends_.recv_arrive) meet(embedding_ends_);
}

template <Pass P>
uint32_t Builder<P>::rendezvous_name() {
  if (rendezvous_name_ == kNone) rendezvous_name_ = intern("rendezvous " + k_.p2p.name);
  return rendezvous_name_;
}

// Called from the other files of the builder.
template uint32_t Builder<Pass::kBuild>::cpu_call(int, const std::string&, double);
template uint32_t Builder<Pass::kCount>::cpu_call(int, const std::string&, double);
template void Builder<Pass::kBuild>::close_launches(int);
template void Builder<Pass::kCount>::close_launches(int);
template uint32_t Builder<Pass::kBuild>::kernel(int, int, const KernelOp&);
template uint32_t Builder<Pass::kCount>::kernel(int, int, const KernelOp&);
template uint32_t Builder<Pass::kBuild>::kernel(int, int, const KernelOp&, Src, uint32_t);
template uint32_t Builder<Pass::kCount>::kernel(int, int, const KernelOp&, Src, uint32_t);
template void Builder<Pass::kBuild>::kernels(int, const std::vector<KernelOp>&, bool, bool);
template void Builder<Pass::kCount>::kernels(int, const std::vector<KernelOp>&, bool, bool);
template void Builder<Pass::kBuild>::stream_wait(int, int, int);
template void Builder<Pass::kCount>::stream_wait(int, int, int);
template Event Builder<Pass::kBuild>::record_event(int, int);
template Event Builder<Pass::kCount>::record_event(int, int);
template void Builder<Pass::kBuild>::wait_event(int, const Event&, int);
template void Builder<Pass::kCount>::wait_event(int, const Event&, int);
template void Builder<Pass::kBuild>::p2p(int, int, bool, int64_t, int64_t, int64_t);
template void Builder<Pass::kCount>::p2p(int, int, bool, int64_t, int64_t, int64_t);
template void Builder<Pass::kBuild>::embedding_allreduce(int);
template void Builder<Pass::kCount>::embedding_allreduce(int);

}  // namespace lumos::model::detail
