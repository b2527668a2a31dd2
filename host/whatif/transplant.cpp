#include "whatif/transplant.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "common/error.hpp"
#include "common/format.hpp"
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

std::string resource_label(const graph::Resource& r) {
  return (r.kind == graph::ResourceKind::kThread ? "thread " : "stream ") + std::to_string(r.a) +
         "/" + std::to_string(r.b);
}

// Per thread or stream (by label): nodes of each step and how many of them the other lacks.
struct ResourceMatch {
  uint64_t m_nodes = 0, m_missing = 0, n_nodes = 0, n_missing = 0;
};

std::vector<std::string> difference_lines(const std::map<std::string, ResourceMatch>& by_res) {
  std::vector<std::pair<uint64_t, std::string>> lines;
  for (const auto& [label, c] : by_res) {
    if (c.m_missing == 0 && c.n_missing == 0) continue;
    std::string line = label + ": ";
    if (c.m_nodes == 0)
      line += "only in N (" + std::to_string(c.n_nodes) + " nodes)";
    else if (c.n_nodes == 0)
      line += "only in M (" + std::to_string(c.m_nodes) + " nodes)";
    else
      line += std::to_string(c.m_missing) + " of M's " + std::to_string(c.m_nodes) +
              " nodes missing in N, " + std::to_string(c.n_missing) + " of N's " +
              std::to_string(c.n_nodes) + " missing in M";
    lines.emplace_back(c.m_missing + c.n_missing, std::move(line));
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> out;
  for (auto& l : lines) out.push_back(std::move(l.second));
  return out;
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
  std::unordered_set<MatchKey, KeyHash> in_m;
  for (graph::NodeId v = 1; v < bm.graph.num_nodes(); ++v) in_m.insert(bm.keys[v]);
  graph::Graph& g = bm.graph;
  std::map<std::string, ResourceMatch> by_res;
  uint64_t covered = 0, coverable = 0;
  for (graph::NodeId w = 1; w < bn.graph.num_nodes(); ++w) {
    if (bn.graph.kind[w] == graph::NodeKind::kStepMarker ||
        bn.graph.resource[w] == graph::kNoResource)
      continue;
    ++coverable;
    ResourceMatch& c = by_res[resource_label(bn.graph.resources[bn.graph.resource[w]])];
    ++c.n_nodes;
    if (in_m.count(bn.keys[w]))
      ++covered;
    else
      ++c.n_missing;
  }
  LUMOS_EXPECT(bn.graph.steps[0].measured_us > 0,
               t.path + ": " + steps[on.window_step].name + " has no activity to predict");
  std::vector<double> dur = g.dur_us;
  std::vector<double> release(g.num_nodes(), -std::numeric_limits<double>::infinity());
  uint64_t matched = 0, matchable = 0;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.kind[v] == graph::NodeKind::kStepMarker) continue;  // named for its own step
    const bool placed = g.resource[v] != graph::kNoResource;
    ResourceMatch* c = placed ? &by_res[resource_label(g.resources[g.resource[v]])] : nullptr;
    if (placed) ++matchable, ++c->m_nodes;
    auto it = in_n.find(bm.keys[v]);
    if (it == in_n.end()) {
      if (placed) dur[v] = 0, ++c->m_missing;  // work step N did not do
      continue;
    }
    const graph::NodeId w = it->second;
    dur[v] = bn.graph.dur_us[w];
    if (g.cls[v] == graph::NodeClass::kComm) {
      // A collective ends when its last peer has arrived plus the transfer: the shorter of the
      // two measurements bounds the transfer, and step N's end gives the peers' arrival.
      const double transfer = std::min(g.dur_us[v], bn.graph.dur_us[w]);
      dur[v] = transfer;
      release[v] = bn.graph.measured_finish_us(w) - transfer;
    }
    if (placed) ++matched;
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
  out.covered_fraction = coverable > 0 ? static_cast<double>(covered) / coverable : 0.0;
  if (out.matched_fraction < kStructureThreshold || out.covered_fraction < kStructureThreshold)
    out.differences = difference_lines(by_res);
  return out;
}

std::string structure_warning(const TransplantResult& r) {
  if (r.differences.empty()) return "";
  std::string s = strprintf(
      "warning: %s and %s differ in structure (%.1f%% of %s's nodes found in %s, %.1f%% of %s's "
      "in %s); the prediction misses work only one of them runs. Differences: ",
      r.from.c_str(), r.to.c_str(), r.matched_fraction * 100, r.from.c_str(), r.to.c_str(),
      r.covered_fraction * 100, r.to.c_str(), r.from.c_str());
  for (size_t i = 0; i < r.differences.size() && i < 4; ++i)
    s += (i ? "; " : "") + r.differences[i];
  if (r.differences.size() > 4)
    s += strprintf("; and %zu more threads or streams", r.differences.size() - 4);
  return s;
}

}  // namespace lumos::whatif
