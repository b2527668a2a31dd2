#include "estimate/trace_pp_edit.hpp"

#include <algorithm>
#include <map>

#include "common/error.hpp"
#include "common/format.hpp"
#include "whatif/stage_regroup.hpp"

namespace lumos::estimate {

bool pipeline_only_edit(const StructuralRequest& req, const std::vector<std::string>& edits) {
  const StructuralEdit& e = req.edit;
  if (!(e.pp || e.interleave) || e.layers || e.hidden || e.ffn || e.heads || e.seq || e.mbs ||
      e.gbs || e.tp || e.dp)
    return false;
  return std::all_of(edits.begin(), edits.end(), [](const std::string& x) {
    return x.rfind("pp ", 0) == 0 || x.rfind("interleave ", 0) == 0;
  });
}

namespace {

// One pipeline message's transfer as the model prices it for the edited layout: the transfer
// that follows a pipeline rendezvous in the model's graph (0 when it has none).
double p2p_transfer_us(const model::StepGraph& sg) {
  const graph::Graph& g = sg.graph;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != graph::NodeKind::kKernel || g.cls[v] != graph::NodeClass::kComm) continue;
    for (uint32_t e = g.pred_offset[v]; e < g.pred_offset[v + 1]; ++e) {
      const graph::NodeId r = g.pred_index[e];
      if (g.pred_kind[e] != graph::EdgeKind::kCrossRank || g.kind[r] != graph::NodeKind::kVirtual)
        continue;
      for (uint32_t k = g.pred_offset[r]; k < g.pred_offset[r + 1]; ++k) {
        const int32_t ci = sg.meta_of(g.pred_index[k]).comm;
        if (ci >= 0 && sg.comms[static_cast<size_t>(ci)].process_group.rfind("pp/", 0) == 0)
          return g.dur_us[v];
      }
    }
  }
  return 0;
}

}  // namespace

GraphEditPath pipeline_on_traced_graph(const graph::LoadedInput& in,
                                       const whatif::TracedKernels& tk, const StructuralAnswer& a,
                                       const EstimateRun& traced_run, const cost::KernelsDb& db) {
  GraphEditPath p;
  auto rebuild = [&](const std::string& why) {
    p.path = "model rebuild (" + why + ")";
    return p;
  };
  const model::ParallelConfig& c = a.traced.cfg;
  const int new_pp = a.edited.estimate.cfg.pp;
  const int64_t layers = a.traced.model.layers;
  if (new_pp == c.pp && a.edits.empty()) {
    p.taken = true;
    p.edited_us = first_step_us(in.graph);
    p.path = "traced-graph edit (pipeline unchanged: the traced graph replayed)";
    return p;
  }
  if (c.interleave != 1)
    return rebuild("an interleaved traced schedule is not regrouped on the traced graph");
  const int new_v = a.edited.estimate.cfg.interleave;
  if (c.tp * c.cp * c.dp != 1)
    return rebuild(
        strprintf("the traced stages have %d ranks each (tp %d, cp %d, dp %d); stages "
                  "are regrouped from one rank per stage",
                  c.tp * c.cp * c.dp, c.tp, c.cp, c.dp));
  if (layers % (new_pp * new_v) != 0)
    return rebuild(strprintf("%lld layers do not split evenly over %d model chunks",
                             static_cast<long long>(layers), new_pp * new_v));
  const uint32_t period = std::max(a.structure.forward.period, a.structure.backward.period);
  whatif::StageRegroupRequest rq;
  rq.new_pp = new_pp;
  rq.traced_pp = c.pp;
  rq.new_interleave = new_v;
  rq.microbatches = c.gbs / std::max<int64_t>(1, c.mbs * c.dp);
  rq.p2p_us = p2p_transfer_us(a.edited.step);
  rq.event_per_launch = db.training.event_call_us / db.training.cpu_launch_us;
  rq.p2p_blocking = db.stack(c.stack.empty() ? db.default_stack : c.stack).p2p_blocking;
  for (const auto& st : traced_run.estimate.stages)
    rq.traced_params_by_stage.push_back(static_cast<double>(st.memory.params));
  for (const auto& st : a.edited.estimate.stages)
    rq.new_params_by_stage.push_back(static_cast<double>(st.memory.params));
  std::map<std::string, bool> pipeline_group;
  for (const auto& pg : a.structure.groups)
    pipeline_group[pg.name] = pg.role == whatif::GroupRole::kPp;
  const graph::Graph& g = in.graph;
  rq.scales_with_params.assign(g.num_nodes(), 0);
  rq.pipeline_nodes.assign(g.num_nodes(), 0);
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] != graph::NodeKind::kKernel) continue;
    size_t table = 0;
    const trace::ClassifiedKernel* k = tk.kernel_of(g, v, &table);
    if (!k) continue;
    rq.scales_with_params[v] = k->kernel_class == "optimizer";
    const trace::Event& e = tk.tables[table]->events[k->event];
    if (e.collective < 0) continue;
    const std::string& name = tk.tables[table]->collectives[e.collective].process_group;
    auto it = pipeline_group.find(name.empty() ? "(unnamed)" : name);
    rq.pipeline_nodes[v] = it != pipeline_group.end() && it->second;
  }
  const auto stretches = whatif::find_layer_stretches(g, period > 0 ? 2 * period + 8 : 4096);
  if (stretches.empty())
    return rebuild("no block of kernels repeats on the compute stream: no traced layers");
  whatif::StageRegroup r;
  try {
    r = whatif::regroup_stages(g, stretches, rq, in.label);
  } catch (const InputError& e) {  // a regrouped graph with a cycle: the trace's order disagrees
    return rebuild(e.what());
  }
  if (!r.why_not.empty()) return rebuild(r.why_not);
  p.taken = true;
  p.edited_us = first_step_us(r.graph);
  const std::string messages =
      r.messages > 0 ? strprintf("%u pipeline messages of %.1f us inserted", r.messages, rq.p2p_us)
                     : std::string("no pipeline messages");
  p.path = strprintf(
      "traced-graph edit (pp %d -> %d%s: %u traced pieces regrouped in %s order, %s, %u "
      "optimizer kernels scaled with the parameters)",
      c.pp, new_pp, new_v > 1 ? strprintf(", interleave %d", new_v).c_str() : "", r.pieces,
      new_v > 1 ? "interleaved 1F1B" : "1F1B", messages.c_str(), r.scaled);
  return p;
}

}  // namespace lumos::estimate
