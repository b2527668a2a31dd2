#include "whatif/trace_calibration.hpp"

#include <algorithm>
#include <unordered_map>

#include "common/format.hpp"
#include "cost/kernel_classifier.hpp"
#include "whatif/peer_waits.hpp"

namespace lumos::whatif {

namespace {

std::string gemm_key(const cost::GemmQuery& q) {
  return strprintf("gemm %lld,%lld,%lld,%lld", static_cast<long long>(q.m),
                   static_cast<long long>(q.n), static_cast<long long>(q.k),
                   static_cast<long long>(q.batch));
}

std::string comm_key(GroupRole r) {
  return std::string("comm ") + to_string(r);
}

GroupRole role_of(model::CommGroup g) {
  switch (g) {
    case model::CommGroup::kTp:
      return GroupRole::kTp;
    case model::CommGroup::kCp:
      return GroupRole::kCp;
    case model::CommGroup::kDp:
      return GroupRole::kDp;
    case model::CommGroup::kPp:
      return GroupRole::kPp;
    case model::CommGroup::kEmbedding:
      return GroupRole::kEmbedding;
    case model::CommGroup::kNone:
      break;
  }
  return GroupRole::kUnknown;
}

// The aggregate a key falls back on: every GEMM, every collective.
std::string aggregate_of(const std::string& key) {
  if (key.rfind("gemm ", 0) == 0) return "gemm";
  if (key.rfind("comm ", 0) == 0) return "comm";
  return "";
}

}  // namespace

double TraceCalibration::factor(const std::string& key) const {
  auto ratio = [&](const std::string& k) {
    auto t = traced_us.find(k), m = model_us.find(k);
    return t != traced_us.end() && m != model_us.end() && m->second > 0 && t->second > 0
               ? t->second / m->second
               : 0.0;
  };
  if (const double f = ratio(key); f > 0) return f;
  const std::string agg = aggregate_of(key);
  if (agg.empty()) return 1;
  const double f = ratio(agg);
  return f > 0 ? f : 1;
}

TraceCalibration calibrate(const graph::Graph& traced, const TracedKernels& tk,
                           const JobStructure& js, const model::StepGraph& sg,
                           const cost::KernelsDb& db) {
  TraceCalibration cal;
  auto add = [](std::map<std::string, double>& to, const std::string& key, double us) {
    to[key] += us;
    const std::string agg = aggregate_of(key);
    if (!agg.empty()) to[agg] += us;
  };
  // The model: per stage and key.
  const graph::Graph& mg = sg.graph;
  std::vector<std::map<std::string, double>> per_stage(static_cast<size_t>(sg.stages));
  std::unordered_map<uint32_t, std::string> class_of_name;
  auto class_of = [&](uint32_t name, const std::string& text) -> const std::string& {
    auto it = class_of_name.find(name);
    if (it == class_of_name.end())
      it = class_of_name.emplace(name, cost::classify_kernel(db, text)).first;
    return it->second;
  };
  for (graph::NodeId v = 1; v < mg.num_nodes(); ++v) {
    const auto& meta = sg.meta_of(v);
    if (mg.kind[v] != graph::NodeKind::kKernel || meta.stage < 0 || mg.dur_us[v] <= 0) continue;
    std::string key;
    if (meta.gemm >= 0) {
      key = gemm_key(sg.gemms[static_cast<size_t>(meta.gemm)]);
    } else if (mg.cls[v] == graph::NodeClass::kComm) {
      GroupRole r = GroupRole::kUnknown;
      if (meta.comm >= 0)
        r = role_from_name(sg.comms[static_cast<size_t>(meta.comm)].process_group);
      else  // the transfer half of a pipeline message or of the tied-embedding all-reduce
        r = meta.stream >= model::kRecvFwd && meta.stream <= model::kSendBwd
                ? GroupRole::kPp
                : GroupRole::kEmbedding;
      key = comm_key(r);
    } else {
      key = "class " + class_of(mg.name[v], mg.names[mg.name[v]]);
    }
    add(per_stage[static_cast<size_t>(meta.stage)], key, mg.dur_us[v]);
  }
  // The trace: per traced rank, against the model's stage of that rank (Megatron's order puts
  // the stage outermost).
  const int inner = js.ranks_per_stage();
  std::map<std::string, GroupRole> role_of_group;
  for (const auto& g : js.groups) role_of_group[g.name] = g.role;
  for (int32_t rank : tk.ranks) {
    const int stage = std::min(sg.stages - 1, std::max(0, rank) / inner);
    for (const auto& [key, us] : per_stage[static_cast<size_t>(stage)]) cal.model_us[key] += us;
  }
  // One iteration of the trace against one of the model: each rank's first step.
  std::map<int32_t, int32_t> first_step;
  for (size_t i = 0; i < traced.steps.size(); ++i)
    first_step.emplace(traced.steps[i].rank, static_cast<int32_t>(i));
  auto in_first_step = [&](graph::NodeId v) {
    if (traced.step[v] < 0) return false;
    auto it = first_step.find(traced.steps[static_cast<size_t>(traced.step[v])].rank);
    return it != first_step.end() && it->second == traced.step[v];
  };
  const PeerWaits waits = peer_waits(traced, tk, db);
  double launch_us = 0;
  uint64_t launches = 0;
  for (graph::NodeId v = 1; v < traced.num_nodes(); ++v) {
    if (!in_first_step(v)) continue;
    if (traced.kind[v] == graph::NodeKind::kRuntime) {
      const std::string& name = traced.names[traced.name[v]];
      if (name.rfind("cudaLaunchKernel", 0) == 0) launch_us += traced.dur_us[v], ++launches;
      continue;
    }
    if (traced.kind[v] != graph::NodeKind::kKernel || traced.dur_us[v] <= 0) continue;
    size_t ti = 0;
    const trace::ClassifiedKernel* k = tk.kernel_of(traced, v, &ti);
    if (!k) continue;
    std::string key;
    if (k->gemm) {
      key = gemm_key(*k->gemm);
    } else if (k->kernel_class == "comm") {
      const trace::Event& e = tk.tables[ti]->events[k->event];
      const trace::CollectiveInfo* ci =
          e.collective >= 0 ? &tk.tables[ti]->collectives[e.collective] : nullptr;
      auto it = role_of_group.find(ci && !ci->process_group.empty() ? ci->process_group
                                                                    : std::string("(unnamed)"));
      key = comm_key(it == role_of_group.end() ? GroupRole::kUnknown : it->second);
      const KernelWait* kw = waits.of(v);
      cal.comm_recorded_us += kw ? kw->traced_us : traced.dur_us[v];
      cal.comm_waited_us += kw ? kw->wait_us : 0.0;
      add(cal.traced_us, key, kw ? kw->transfer_us : traced.dur_us[v]);
      continue;
    } else {
      key = "class " + k->kernel_class;
    }
    add(cal.traced_us, key, traced.dur_us[v]);
  }
  cal.traced_launch_us = launches > 0 ? launch_us / static_cast<double>(launches) : 0;
  return cal;
}

void apply_calibration(const TraceCalibration& cal, const cost::KernelsDb& db,
                       model::StepCosts& costs) {
  auto scale = [&](model::KernelOp& op) {
    std::string key;
    if (op.gemm)
      key = gemm_key(*op.gemm);
    else if (op.comm())
      key = comm_key(role_of(op.group));
    else
      key = "class " + cost::classify_kernel(db, op.name);
    op.dur_us *= cal.factor(key);
  };
  for (auto* list : {&costs.layer_fwd, &costs.layer_bwd, &costs.layer_recompute, &costs.embed_fwd,
                     &costs.embed_bwd, &costs.head_fwd, &costs.head_bwd})
    for (auto& op : *list) scale(op);
  scale(costs.p2p);
  scale(costs.embedding_allreduce);
  costs.dp_comm_scale = cal.factor(comm_key(GroupRole::kDp));
  costs.optimizer_scale = cal.factor("class optimizer");
  if (cal.traced_launch_us > 0) costs.cpu_launch_us = cal.traced_launch_us;
}

}  // namespace lumos::whatif
