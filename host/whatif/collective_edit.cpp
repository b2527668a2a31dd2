#include "whatif/collective_edit.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "common/error.hpp"
#include "common/format.hpp"
#include "cost/collective_model.hpp"
#include "cost/dtype.hpp"
#include "model/fp8_amax_reduction.hpp"
#include "model/slowest_gpu.hpp"
#include "whatif/peer_waits.hpp"

namespace lumos::whatif {

namespace {

// The ranks of a group that share a node, in Megatron's rank order (tensor, context, data,
// pipeline from the inside out): a node holds gpn / tp of the gradient group (dp x cp), and the
// first and last pipeline stages sit on different nodes once a stage fills one.
int ranks_per_node(const JobStructure& js, GroupRole role, int size, const cost::Topology& topo) {
  const int gpn = std::max(1, topo.gpus_per_node);
  const int tp = std::max(1, js.tp);
  int fit = gpn;
  if (role == GroupRole::kCp || role == GroupRole::kDp) fit = gpn / tp;
  if (role == GroupRole::kPp || role == GroupRole::kEmbedding)
    fit = js.ranks_per_stage() >= gpn ? 1 : gpn;
  return std::max(1, std::min(size, fit));
}

struct GroupChange {
  int traced_size = 0, size = 0;
  EditLine line;
};

// Delayed scaling's amax all-reduce as a trace shows it: a small fp32 all-reduce over the
// stage's tensor x context x data-parallel ranks (Megatron-Core's amax reduction group) that
// NCCL's kernel name marks as a MAX (ncclDevKernel_AllReduce_Max_f32; older releases'
// ncclKernel_AllReduce_RING_LL_Max_float; gradients and losses reduce with Sum) or the trace's
// group description names. NCCL 2.19 and later may launch a MAX under a Sum kernel's name:
// without a description such a trace's amax all-reduces stay with their group's collectives.
// The caller checks the job runs FP8.
bool is_amax_reduction(std::string_view kernel, const trace::CollectiveInfo& ci, int stage_ranks) {
  constexpr int64_t kMaxAmaxElems = int64_t{1} << 20;  // a few amaxes per FP8 module
  if (ci.type != trace::CollectiveType::kAllReduce || ci.group_size != stage_ranks ||
      ci.in_nelems > kMaxAmaxElems || (!ci.dtype.empty() && cost::tensor_elem_bytes(ci.dtype) != 4))
    return false;
  std::string desc = ci.process_group_desc;
  for (char& ch : desc) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return kernel.find("_Max") != std::string_view::npos || desc.find("amax") != std::string::npos;
}

// Whether a rank's trace runs FP8 GEMMs: operands typed Float8 (the launching operator's input
// types) or a cuBLAS or CUTLASS kernel named for its FP8 formats (Transformer Engine 1.x passes
// FP8 tensors as uint8).
bool runs_fp8_gemms(const trace::TraceCostReport& r, const trace::EventTable& t) {
  for (const auto& k : r.kernels) {
    if (k.kernel_class != "gemm") continue;
    if (k.gemm && k.gemm->dtype == cost::Dtype::kFp8) return true;
    const std::string_view name = t.name_of(t.events[k.event]);
    if (name.find("e4m3") != std::string_view::npos || name.find("e5m2") != std::string_view::npos)
      return true;
  }
  return false;
}

}  // namespace

graph::Graph edit_collectives(const graph::Graph& g, const TracedKernels& tk,
                              const JobStructure& js, const CollectiveEditRequest& req,
                              const cost::KernelsDb& db, std::vector<EditLine>* lines) {
  const ProcessGroup* dp_group = js.group_with(GroupRole::kDp);
  if (req.dp > 0) {
    LUMOS_EXPECT(dp_group != nullptr,
                 "lumos whatif: --dp needs the data-parallel group, and the trace shows none "
                 "(see --describe)");
    LUMOS_EXPECT(dp_group->size > 0, "lumos whatif: --dp: the size of group " + dp_group->name +
                                         " is unknown (no NCCL group args, no distributedInfo)");
  }
  const bool network = req.topology != req.traced_topology;
  // New size per group name: every group keeps its size unless --dp resizes it.
  // The gradient group spans the context-parallel ranks: --dp N makes it N x cp.
  const int cp = std::max(1, js.cp);
  const int new_group = req.dp > 0 && dp_group->size % cp == 0 ? req.dp * cp : req.dp;
  // The job after the edit: its DP degree moves the pipeline and embedding pairs across nodes.
  JobStructure after = js;
  if (req.dp > 0) after.dp = new_group;
  std::map<std::string, GroupChange> change;
  for (const auto& pg : js.groups) {
    GroupChange c;
    c.traced_size = c.size = pg.size;
    if (req.dp > 0 && pg.role == GroupRole::kDp) c.size = new_group;
    const bool moved = pg.size > 0 && ranks_per_node(js, pg.role, pg.size, *req.traced_topology) !=
                                          ranks_per_node(after, pg.role, pg.size, *req.topology);
    if (c.size == c.traced_size && !network && !moved) continue;
    c.line.what = pg.role == GroupRole::kDp && c.size != c.traced_size
                      ? strprintf("dp group %d -> %d ranks: collectives of group %s repriced",
                                  c.traced_size, c.size, pg.name.c_str())
                  : network
                      ? "collectives of group " + pg.name + " repriced on " + req.topology->name
                      : "collectives of group " + pg.name + " repriced: its ranks now " +
                            (ranks_per_node(after, pg.role, pg.size, *req.topology) > 1
                                 ? "share a node"
                                 : "sit on different nodes");
    change.emplace(pg.name, c);
  }
  // Distributed optimizer: gradients reduce-scattered and parameters all-gathered over DP, each
  // rank updating its shard; the optimizer kernels then scale with 1 / dp.
  double optimizer_scale = 1;
  EditLine opt_line;
  if (req.dp > 0 && dp_group->ops.count(trace::CollectiveType::kReduceScatter) &&
      dp_group->ops.count(trace::CollectiveType::kAllGather)) {
    optimizer_scale = static_cast<double>(dp_group->size) / new_group;
    opt_line.what = strprintf("distributed optimizer: optimizer kernels x %.4g (shard of dp %d)",
                              optimizer_scale, req.dp);
  }
  // More replicas, more GPUs to wait for: the job's matrix kernels run at the pace of a slower
  // slowest GPU (model/slowest_gpu.hpp), the ratio of the edited job's factor to the traced one's.
  double matrix_scale = 1;
  EditLine matrix_line;
  if (req.dp > 0 && new_group != dp_group->size) {
    const int64_t traced_gpus =
        js.world_size > 0 ? js.world_size : int64_t{js.ranks_per_stage()} * std::max(1, js.pp);
    const int64_t gpus = traced_gpus * new_group / dp_group->size;
    matrix_scale = model::slowest_gpu_matrix_factor(*req.gpu, gpus) /
                   model::slowest_gpu_matrix_factor(*req.gpu, traced_gpus);
    matrix_line.what =
        strprintf("slowest GPU of %lld in place of %lld: GEMM and attention kernels x %.4g",
                  static_cast<long long>(gpus), static_cast<long long>(traced_gpus), matrix_scale);
  }
  graph::Graph out = g;
  // The repricing scales transfers: a kernel's wait for its peers (inside its duration on one
  // rank's trace; a folder's rendezvous has taken it out already) stays as traced.
  const PeerWaits waits = peer_waits(g, tk, db);
  std::map<std::tuple<int, double, int, int>, double> model_cache;
  auto model_us = [&](const cost::CollectiveQuery& q, int ranks, int per_node,
                      const cost::Topology& topo) {
    if (ranks < 2) return 0.0;
    const auto key = std::make_tuple(static_cast<int>(q.op), q.bytes, ranks,
                                     per_node * 2 + (&topo == req.topology ? 1 : 0));
    auto it = model_cache.find(key);
    if (it != model_cache.end()) return it->second;
    cost::CollectiveQuery x = q;
    x.ranks = ranks, x.ranks_per_node = per_node;
    return model_cache[key] = cost::collective_time(db, *req.gpu, topo, x).time_us;
  };
  // Delayed scaling's amax all-reduces span the stage's replicas: --dp widens each and makes it
  // wait for the last of more of them, as the model prices it (model/fp8_amax_reduction.hpp). A
  // trace names no stack, so the skew is delayed scaling's, the recipe that reduces amaxes across
  // replicas. One over the tensor and context ranks only (tp_only_amax_red) waits for no
  // replica; with one traced replica the amax group is those ranks too, and the two cannot be
  // told apart: both keep their group's repricing.
  const int traced_replicas = !dp_group                  ? 1
                              : dp_group->size % cp == 0 ? dp_group->size / cp
                                                         : dp_group->size;
  const int new_replicas = req.dp > 0 ? req.dp : traced_replicas;
  const auto delayed = db.fp8_recipes.find("delayed_scaling");
  const double replica_skew_us =
      delayed != db.fp8_recipes.end() ? delayed->second.replica_skew_us : 0.0;
  const int amax_traced_ranks = std::max(1, js.tp) * cp * traced_replicas;
  std::vector<char> fp8_table(tk.tables.size(), 0);
  if (traced_replicas > 1 && (new_replicas != traced_replicas || network))
    for (size_t i = 0; i < tk.tables.size(); ++i)
      fp8_table[i] = runs_fp8_gemms(tk.reports[i], *tk.tables[i]);
  EditLine amax_line;
  int amax_ranks[2] = {0, 0};
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != graph::NodeKind::kKernel) continue;
    size_t ti = 0;
    const trace::ClassifiedKernel* kp = tk.kernel_of(g, v, &ti);
    if (!kp) continue;
    const trace::ClassifiedKernel& k = *kp;
    const trace::EventTable* t = tk.tables[ti];
    if (k.kernel_class == "optimizer" && optimizer_scale != 1) {
      out.dur_us[v] = g.dur_us[v] * optimizer_scale;
      ++opt_line.kernels, opt_line.traced_us += g.dur_us[v], opt_line.edited_us += out.dur_us[v];
      continue;
    }
    if (matrix_scale != 1 && (k.kernel_class == "gemm" || k.kernel_class == "attention_fwd" ||
                              k.kernel_class == "attention_bwd")) {
      out.dur_us[v] = g.dur_us[v] * matrix_scale;
      ++matrix_line.kernels;
      matrix_line.traced_us += g.dur_us[v], matrix_line.edited_us += out.dur_us[v];
      continue;
    }
    if (k.kernel_class != "comm") continue;
    const trace::Event& e = t->events[k.event];
    const trace::CollectiveInfo* ci = e.collective >= 0 ? &t->collectives[e.collective] : nullptr;
    if (fp8_table[ti] && ci && k.collective &&
        is_amax_reduction(t->name_of(e), *ci, amax_traced_ranks)) {
      const int before_ranks = ci->group_size;
      const int after_ranks = before_ranks / traced_replicas * new_replicas;
      const double bytes = k.collective->bytes;
      auto all_reduce_us = [&](const cost::Topology& topo, int ranks, int replicas, double skew) {
        return model::amax_all_reduce_us(db, *req.gpu, topo, bytes, ranks, replicas, skew);
      };
      const double before_us =
          all_reduce_us(*req.traced_topology, before_ranks, traced_replicas, replica_skew_us);
      const double after_us =
          all_reduce_us(*req.topology, after_ranks, new_replicas, replica_skew_us);
      const KernelWait* kw = waits.of(v);
      if (kw && kw->from == TransferFrom::kRendezvous) {
        // A folder's rendezvous has joined the traced ranks: the kernel is the transfer, and
        // what the edit adds is the wait for the replicas no trace joined.
        const double nccl_before_us = all_reduce_us(*req.traced_topology, before_ranks, 1, 0);
        const double nccl_after_us = all_reduce_us(*req.topology, after_ranks, 1, 0);
        out.dur_us[v] = g.dur_us[v] * nccl_after_us / nccl_before_us +
                        std::max(0.0, (after_us - nccl_after_us) - (before_us - nccl_before_us));
      } else {
        // One rank's trace holds the transfer and the wait for the last replica in the kernel, as
        // a generated job holds the model's (a layer's share of it): both scale together.
        out.dur_us[v] = g.dur_us[v] * after_us / before_us;
      }
      amax_ranks[0] = before_ranks, amax_ranks[1] = after_ranks;
      if (g.dur_us[v] > 0)  // not a multi-rank arrival (no time of its own)
        ++amax_line.kernels, amax_line.traced_us += g.dur_us[v],
            amax_line.edited_us += out.dur_us[v];
      continue;
    }
    const std::string name =
        ci && !ci->process_group.empty() ? ci->process_group : std::string("(unnamed)");
    auto c = change.find(name);
    if (c == change.end()) continue;
    GroupChange& gc = c->second;
    LUMOS_EXPECT(gc.traced_size > 0,
                 "lumos whatif: group " + name + " has no known size to reprice from");
    const GroupRole role = [&] {
      for (const auto& pg : js.groups)
        if (pg.name == name) return pg.role;
      return GroupRole::kUnknown;
    }();
    // Pipeline messages (sends, receives, and batched send/receive kernels of the pipeline
    // group) are between two ranks, priced from their element count.
    const bool message =
        ci &&
        (ci->type == trace::CollectiveType::kSend || ci->type == trace::CollectiveType::kRecv ||
         (ci->type == trace::CollectiveType::kSendRecv && role == GroupRole::kPp));
    std::optional<cost::CollectiveQuery> query = k.collective;
    if (message) {
      const double bytes = ci->in_nelems > 0 ? static_cast<double>(ci->in_nelems) *
                                                   cost::tensor_elem_bytes(ci->dtype)
                           : k.collective ? k.collective->bytes
                                          : 0.0;
      query.reset();
      if (bytes > 0) {
        query = cost::CollectiveQuery{};
        query->op = cost::Collective::kSendRecv;
        query->bytes = bytes;
      }
    }
    if (!query) {
      throw InputError(strprintf(
          "lumos whatif: %s: collective '%s' (trace event %u) has no message size (no NCCL args "
          "or input dims), so it cannot be repriced",
          t->path.c_str(), std::string(t->name_of(e)).c_str(), e.index));
    }
    const int traced_ranks = message ? 2 : gc.traced_size;
    const int new_ranks = message ? 2 : gc.size;
    const double before =
        model_us(*query, traced_ranks, ranks_per_node(js, role, traced_ranks, *req.traced_topology),
                 *req.traced_topology);
    const double after_us = model_us(
        *query, new_ranks, ranks_per_node(after, role, new_ranks, *req.topology), *req.topology);
    // A group of one rank ran no transfer: the model's time is all there is to go on.
    const KernelWait* kw = waits.of(v);
    const double wait_us = kw && kw->from != TransferFrom::kRendezvous ? kw->wait_us : 0.0;
    const double transfer_us = g.dur_us[v] - wait_us;
    out.dur_us[v] = wait_us + (before > 0 ? transfer_us * after_us / before : after_us);
    if (g.dur_us[v] > 0 || before <= 0)  // not a multi-rank arrival (no time of its own)
      ++gc.line.kernels, gc.line.traced_us += g.dur_us[v], gc.line.edited_us += out.dur_us[v];
  }
  if (lines) {
    for (auto& [name, gc] : change)
      if (gc.line.kernels > 0 && gc.line.edited_us != gc.line.traced_us) lines->push_back(gc.line);
    if (amax_line.kernels > 0) {
      amax_line.what = strprintf(
          "fp8 amax all-reduces: %d -> %d ranks, the last of %d replicas in place of %d (replica "
          "skew %.0f us)",
          amax_ranks[0], amax_ranks[1], new_replicas, traced_replicas, replica_skew_us);
      lines->push_back(amax_line);
    }
    if (opt_line.kernels > 0) lines->push_back(opt_line);
    if (matrix_line.kernels > 0) lines->push_back(matrix_line);
  }
  return out;
}

}  // namespace lumos::whatif
