#include "estimate/trace_graph_edit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/format.hpp"
#include "replay/reference_replay.hpp"
#include "replay/step_report.hpp"
#include "whatif/collective_edit.hpp"
#include "whatif/layer_splice.hpp"
#include "whatif/peer_waits.hpp"

namespace lumos::estimate {

double first_step_us(const graph::Graph& g) {
  std::map<int32_t, double> first;
  for (const auto& st : replay::step_times(g, replay::reference_replay(g)))
    first.emplace(st.rank, st.replayed_us);
  double us = 0;
  for (const auto& [rank, t] : first) us = std::max(us, t);
  return us;
}

namespace {

// Which of the parameter-bound kernels a node is: 0 none, 1 optimizer, 2 a data-parallel
// collective.
int parameter_kind(const graph::Graph& g, graph::NodeId v, const whatif::TracedKernels& tk,
                   const std::map<std::string, bool>& dp_group) {
  if (g.kind[v] != graph::NodeKind::kKernel) return 0;
  size_t ti = 0;
  const trace::ClassifiedKernel* k = tk.kernel_of(g, v, &ti);
  if (!k) return 0;
  if (k->kernel_class == "optimizer") return 1;
  if (k->kernel_class != "comm") return 0;
  const trace::Event& e = tk.tables[ti]->events[k->event];
  if (e.collective < 0) return 0;
  const std::string& name = tk.tables[ti]->collectives[e.collective].process_group;
  auto it = dp_group.find(name.empty() ? "(unnamed)" : name);
  return it != dp_group.end() && it->second ? 2 : 0;
}

// The optimizer kernels and the data-parallel group's collectives of each rank, times its
// stage's parameter ratio, where they run once per parameter bucket of the stage rather than once
// per layer instance. Those the splice copied or removed with the layers (a gradient bucket per
// layer, launched inside the layer's backward) already changed in number, so a rank's kind is
// scaled only when the splice left its count as traced. A collective's wait for its peers stays
// as traced: only its transfer moves more bytes.
uint32_t scale_with_parameters(const graph::Graph& traced, graph::Graph& g,
                               const whatif::TracedKernels& tk, const whatif::JobStructure& js,
                               const std::vector<double>& ratio, const cost::KernelsDb* db) {
  if (ratio.empty()) return 0;
  std::map<std::string, bool> dp_group;
  for (const auto& pg : js.groups) dp_group[pg.name] = pg.role == whatif::GroupRole::kDp;
  // Per (rank, kind): kernels in the traced graph minus kernels after the splice.
  std::map<std::pair<int32_t, int>, int64_t> count_change;
  for (graph::NodeId v = 1; v < traced.num_nodes(); ++v)
    if (const int kind = parameter_kind(traced, v, tk, dp_group))
      ++count_change[{traced.resources[traced.resource[v]].rank, kind}];
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
    if (const int kind = parameter_kind(g, v, tk, dp_group))
      --count_change[{g.resources[g.resource[v]].rank, kind}];
  const whatif::PeerWaits waits = db ? whatif::peer_waits(g, tk, *db) : whatif::PeerWaits{};
  const int per_stage = std::max(1, js.ranks_per_stage());
  uint32_t scaled = 0;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    const int kind = parameter_kind(g, v, tk, dp_group);
    if (kind == 0) continue;
    const int32_t rank = g.resources[g.resource[v]].rank;
    if (count_change[{rank, kind}] != 0) continue;
    const size_t stage = std::min(ratio.size() - 1, static_cast<size_t>(rank / per_stage));
    if (ratio[stage] == 1) continue;
    const double transfer_us = kind == 2 ? waits.transfer_us_of(g, v) : g.dur_us[v];
    g.dur_us[v] += transfer_us * (ratio[stage] - 1);
    ++scaled;
  }
  return scaled;
}

}  // namespace

GraphEditPath layers_on_traced_graph(const graph::Graph& g, const whatif::TracedKernels& tk,
                                     const whatif::JobStructure& js, const LayersOnTrace& req,
                                     const std::string& label) {
  const int64_t traced_layers = req.traced_layers, new_layers = req.new_layers;
  const int pp = req.pp, interleave = req.interleave;
  GraphEditPath p;
  auto rebuild = [&](const std::string& why) {
    p.path = "model rebuild (" + why + ")";
    return p;
  };
  // A trace of only some stages of a pipelined job (one rank's file): their receives wait for the
  // stages it does not hold, and those waits grow with the untraced stages' layers, which a
  // splice cannot see. Stages in Megatron's rank order (JobStructure::ranks_per_stage).
  const int per_stage = js.ranks_per_stage();
  if (pp > 1 && per_stage > 0) {
    std::set<int32_t> stages;
    for (int32_t r : js.traced_ranks) stages.insert(r / per_stage);
    if (static_cast<int>(stages.size()) < pp)
      return rebuild(
          strprintf("the trace holds %zu of the job's %d pipeline stages, whose receives "
                    "wait for the stages it does not hold",
                    stages.size(), pp));
  }
  const int64_t chunks = static_cast<int64_t>(std::max(1, pp)) * std::max(1, interleave);
  if (traced_layers % chunks != 0 || new_layers % chunks != 0)
    return rebuild(strprintf("%lld -> %lld layers do not split evenly over %lld model chunks",
                             static_cast<long long>(traced_layers),
                             static_cast<long long>(new_layers), static_cast<long long>(chunks)));
  // Twice the described rank's longest layer block bounds the search on every rank (the default
  // when it found none).
  const uint32_t period = std::max(js.forward.period, js.backward.period);
  auto stretches = whatif::find_layer_stretches(g, period > 0 ? 2 * period + 8 : 4096);
  if (stretches.empty())
    return rebuild("no block of kernels repeats on the compute stream: no traced layers");
  uint32_t most = 0;
  for (const auto& s : stretches) most = std::max(most, s.instances);
  // A traced instance may hold several layers (a block of a sliding- and a full-attention
  // layer); the first layer of a pass may differ from the rest and sit outside the repeats; in an
  // interleaved schedule the passes of successive chunks run back to back, one stretch for
  // several passes of one-layer instances, split here into passes.
  const int64_t per_chunk = traced_layers / chunks;
  int64_t block = std::max<int64_t>(1, per_chunk / most);
  if (most > per_chunk && most % per_chunk == 0) {
    block = 1;
    if (!whatif::split_passes(stretches, static_cast<uint32_t>(per_chunk)))
      return rebuild(
          strprintf("a traced run of layers is not a whole number of passes of %lld "
                    "layers",
                    static_cast<long long>(per_chunk)));
  } else if (block * most > per_chunk || per_chunk - block * most >= block) {
    return rebuild(
        strprintf("the traced passes repeat a block %u times, which does not divide "
                  "%lld layers per model chunk",
                  most, static_cast<long long>(per_chunk)));
  }
  const int64_t delta_layers = (new_layers - traced_layers) / chunks;
  if (delta_layers % block != 0)
    return rebuild(
        strprintf("a traced layer instance holds %lld layers; %lld -> %lld layers is "
                  "not a whole number of instances per model chunk",
                  static_cast<long long>(block), static_cast<long long>(traced_layers),
                  static_cast<long long>(new_layers)));
  const int delta = static_cast<int>(delta_layers / block);
  whatif::LayerSplice s;
  try {
    s = whatif::splice_layers(g, stretches, delta, label);
  } catch (const InputError& e) {
    return rebuild(e.what());
  }
  const uint32_t scaled =
      scale_with_parameters(g, s.graph, tk, js, req.param_ratio_by_stage, req.db);
  std::string dp_edit;
  if (req.dp > 0) {
    const cost::Topology& topo = req.db->default_topology_for(*req.gpu);
    whatif::CollectiveEditRequest er;
    er.dp = req.dp, er.gpu = req.gpu, er.traced_topology = &topo, er.topology = &topo;
    std::vector<whatif::EditLine> lines;
    // A job without a data-parallel group is refused (one line), not rebuilt by the model.
    s.graph = whatif::edit_collectives(s.graph, tk, js, er, *req.db, &lines);
    for (const auto& l : lines) dp_edit += strprintf("; %s: %u kernels", l.what.c_str(), l.kernels);
  }
  p.taken = true;
  p.edited_us = first_step_us(s.graph);
  p.path = strprintf(
      "traced-graph edit (layers %s: %u -> %u instances of %lld layer%s in %u "
      "passes, %u nodes added, %u removed; %u optimizer and gradient-reduction kernels "
      "scaled with the parameters%s)",
      delta > 0   ? "duplicated"
      : delta < 0 ? "removed"
                  : "unchanged",
      s.instances_before, s.instances_after, static_cast<long long>(block), block == 1 ? "" : "s",
      s.stretches, s.nodes_added, s.nodes_removed, scaled, dp_edit.c_str());
  return p;
}

}  // namespace lumos::estimate
