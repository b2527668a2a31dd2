#include "whatif/transplant.hpp"

#include <limits>
#include <unordered_map>

#include "common/error.hpp"
#include "replay/reference_replay.hpp"

namespace lumos::whatif {

using graph::BuildOptions;
using graph::BuildResult;
using graph::MatchKey;

namespace {

struct KeyHash {
  size_t operator()(const MatchKey& k) const {
    size_t h = k.resource_kind;
    auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(static_cast<uint64_t>(k.a));
    mix(static_cast<uint64_t>(k.b));
    mix(k.parent);
    mix(k.parent_occurrence);
    mix(k.name);
    mix(k.piece);
    mix(k.occurrence);
    return h;
  }
};

int step_index(const std::vector<graph::TraceStep>& steps, int64_t number,
               const std::string& path) {
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].number == number) return static_cast<int>(i);
  std::string have;
  for (size_t i = 0; i < steps.size() && i < 12; ++i)
    have += (i ? ", " : "") + std::to_string(steps[i].number);
  throw InputError(
      path + ": no ProfilerStep#" + std::to_string(number) + " in the trace" +
      (steps.empty() ? " (it has no ProfilerStep annotations)" : " (it has " + have + ")"));
}

double pct(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured * 100.0 : 0.0;
}

}  // namespace

TransplantResult transplant(const trace::EventTable& t, int64_t from_step, int64_t to_step,
                            const BuildOptions& opt) {
  const auto steps = graph::find_steps(t);
  BuildOptions om = opt, on = opt;
  om.transplant_data = on.transplant_data = true;  // match keys and resource-free edges
  om.window_step = step_index(steps, from_step, t.path);
  on.window_step = step_index(steps, to_step, t.path);
  BuildResult bm = graph::build_graph(t, om);
  const BuildResult bn = graph::build_graph(t, on);

  std::unordered_map<MatchKey, graph::NodeId, KeyHash> in_n;
  for (graph::NodeId v = 1; v < bn.graph.num_nodes(); ++v) in_n.emplace(bn.keys[v], v);
  graph::Graph& g = bm.graph;
  LUMOS_EXPECT(bn.graph.steps[0].measured_us > 0,
               t.path + ": " + steps[on.window_step].name + " has no activity to predict");
  std::vector<double> dur = g.dur_us;
  std::vector<double> release(g.num_nodes(), -std::numeric_limits<double>::infinity());
  uint64_t matched = 0, matchable = 0;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] == graph::NodeKind::kStepMarker) continue;  // named for its own step
    ++matchable;
    auto it = in_n.find(bm.keys[v]);
    if (it == in_n.end()) continue;
    const graph::NodeId w = it->second;
    dur[v] = bn.graph.dur_us[w];
    if (g.cls[v] == graph::NodeClass::kComm) {
      // A collective ends when its last peer has arrived plus the transfer: the shorter of the
      // two measurements bounds the transfer, and step N's end gives the peers' arrival.
      const double transfer = std::min(g.dur_us[v], bn.graph.dur_us[w]);
      dur[v] = transfer;
      release[v] = bn.graph.measured_finish_us(w) - transfer;
    }
    ++matched;
  }
  // Step N's initial conditions: when each resource became free, relative to step N's start.
  for (const graph::FreeEdge& fe : bm.free_edges) {
    const graph::ResourceFree* rf = nullptr;
    for (const auto& r : bn.resource_free)
      if (r.resource_kind == fe.resource_kind && r.a == fe.a && r.b == fe.b) rf = &r;
    if (!rf) continue;
    for (uint32_t e = g.pred_offset[fe.node]; e < g.pred_offset[fe.node + 1]; ++e) {
      if (g.pred_index[e] == graph::kOrigin && g.pred_kind[e] == graph::EdgeKind::kOrigin)
        g.pred_lag_us[e] =
            static_cast<double>(rf->free_ns - bn.graph.t0_ns) / 1000.0 + fe.chain_lag_us;
    }
  }
  const replay::ReplayResult r = replay::reference_replay(g, &dur, &release);
  double end = 0;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) end = std::max(end, r.finish_us[v]);
  TransplantResult out;
  out.from = steps[om.window_step].name;
  out.to = steps[on.window_step].name;
  out.predicted_us = end - r.start_us[g.steps[0].marker];
  out.measured_us = bn.graph.steps[0].measured_us;
  out.error_pct = pct(out.predicted_us, out.measured_us);
  out.naive_us = g.steps[0].measured_us;
  out.naive_error_pct = pct(out.naive_us, out.measured_us);
  out.matched_fraction = matchable > 0 ? static_cast<double>(matched) / matchable : 0.0;
  return out;
}

}  // namespace lumos::whatif
