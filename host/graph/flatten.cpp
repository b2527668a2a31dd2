#include "graph/flatten.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace lumos::graph {

Graph flatten(const Draft& d, std::vector<NodeId>* new_id,
              const std::function<std::string(uint32_t)>& describe, const std::string& label) {
  const uint32_t n = static_cast<uint32_t>(d.nodes.size());
  // 1. Successor lists of the draft (count, scan, scatter).
  std::vector<uint32_t> succ_off(n + 1, 0), indeg(n, 0);
  for (const DraftEdge& e : d.edges) {
    ++succ_off[e.src + 1];
    ++indeg[e.dst];
  }
  for (uint32_t i = 0; i < n; ++i) succ_off[i + 1] += succ_off[i];
  std::vector<uint32_t> succ(d.edges.size()), fill(succ_off.begin(), succ_off.end() - 1);
  for (const DraftEdge& e : d.edges) succ[fill[e.src]++] = e.dst;

  // 2. Kahn's algorithm level by level (a node's level: 1 + its predecessors' latest), each level
  // a wavefront.
  std::vector<uint32_t> order;
  order.reserve(n);
  std::vector<uint32_t> remaining = indeg;
  std::vector<uint32_t> frontier;
  for (uint32_t v = 0; v < n; ++v)
    if (remaining[v] == 0) frontier.push_back(v);
  std::vector<uint32_t> wave_offset{0};
  std::vector<uint32_t> next;
  while (!frontier.empty()) {
    if (!std::is_sorted(frontier.begin(), frontier.end()))
      std::sort(frontier.begin(), frontier.end());
    next.clear();
    for (uint32_t v : frontier) {
      order.push_back(v);
      for (uint32_t k = succ_off[v]; k < succ_off[v + 1]; ++k)
        if (--remaining[succ[k]] == 0) next.push_back(succ[k]);
    }
    wave_offset.push_back(static_cast<uint32_t>(order.size()));
    frontier.swap(next);
  }
  if (order.size() != n) {
    // Walk predecessors among the unfinished nodes until one repeats: that is a cycle.
    std::vector<std::vector<uint32_t>> preds(n);
    for (const DraftEdge& e : d.edges)
      if (remaining[e.src] > 0 && remaining[e.dst] > 0) preds[e.dst].push_back(e.src);
    uint32_t v = 0;
    while (remaining[v] == 0) ++v;
    std::vector<int64_t> seen_at(n, -1);
    std::vector<uint32_t> path;
    while (seen_at[v] < 0) {
      seen_at[v] = static_cast<int64_t>(path.size());
      path.push_back(v);
      v = preds[v].front();
    }
    std::vector<uint32_t> cycle(path.begin() + seen_at[v], path.end());
    std::reverse(cycle.begin(), cycle.end());
    std::string msg =
        label + ": dependency cycle (the trace's GPU order contradicts its launch or sync order): ";
    for (size_t i = 0; i < cycle.size() && i < 6; ++i)
      msg += (i ? " -> " : "") + describe(cycle[i]);
    if (cycle.size() > 6) msg += " -> ... (" + std::to_string(cycle.size()) + " nodes)";
    throw InputError(msg);
  }
  LUMOS_EXPECT(order[0] == 0 && d.nodes[0].kind == NodeKind::kVirtual && indeg[0] == 0,
               label + ": internal: origin is not the first node");

  // 3. Renumber and build the predecessor CSR.
  new_id->assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) (*new_id)[order[i]] = i;
  Graph g;
  g.kind.resize(n);
  g.cls.resize(n);
  g.resource.resize(n);
  g.step.resize(n);
  g.name.resize(n);
  g.event.resize(n);
  g.dur_us.resize(n);
  g.measured_start_us.resize(n);
  // The draft's nodes are read in the new order, scattered: each fetched a few nodes ahead.
  constexpr uint32_t kAhead = 16;
  for (uint32_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(&d.nodes[order[i + kAhead]]);
    const DraftNode& dn = d.nodes[order[i]];
    g.kind[i] = dn.kind;
    g.cls[i] = dn.cls;
    g.resource[i] = dn.resource;
    g.step[i] = dn.step;
    g.name[i] = dn.name;
    g.event[i] = dn.event;
    g.dur_us[i] = dn.dur_us;
    g.measured_start_us[i] = dn.start_us;
  }
  // A node's predecessors are its draft node's in-edges, counted before.
  g.pred_offset.resize(n + 1);
  g.pred_offset[0] = 0;
  for (uint32_t i = 0; i < n; ++i) g.pred_offset[i + 1] = g.pred_offset[i] + indeg[order[i]];
  g.pred_index.resize(d.edges.size());
  g.pred_lag_us.resize(d.edges.size());
  g.pred_kind.resize(d.edges.size());
  std::vector<uint32_t> at(g.pred_offset.begin(), g.pred_offset.end() - 1);
  const auto edges = static_cast<uint32_t>(d.edges.size());
  for (uint32_t k = 0; k < edges; ++k) {
    // Each edge's destination counter, read a few edges ahead: scattered, it missed the cache.
    if (k + kAhead < edges) __builtin_prefetch(&at[(*new_id)[d.edges[k + kAhead].dst]], 1);
    const DraftEdge& e = d.edges[k];
    const uint32_t pos = at[(*new_id)[e.dst]]++;
    g.pred_index[pos] = (*new_id)[e.src];
    g.pred_lag_us[pos] = e.lag_us;
    g.pred_kind[pos] = e.kind;
  }
  // Edges into one node sorted by predecessor id (stable): deterministic files and tie-breaking.
  // The lists are short (about 1.5 edges per node), so an insertion sort per node beats one
  // global sort.
  // Long lists (rendezvous nodes have one predecessor per rank) take a stable sort instead.
  std::vector<uint32_t> perm;
  std::vector<NodeId> idx_tmp;
  std::vector<double> lag_tmp;
  std::vector<EdgeKind> kind_tmp;
  for (uint32_t v = 0; v < n; ++v) {
    const uint32_t lo = g.pred_offset[v], hi = g.pred_offset[v + 1];
    if (hi - lo > 16) {
      perm.resize(hi - lo);
      for (uint32_t k = 0; k < hi - lo; ++k) perm[k] = lo + k;
      std::stable_sort(perm.begin(), perm.end(),
                       [&](uint32_t x, uint32_t y) { return g.pred_index[x] < g.pred_index[y]; });
      idx_tmp.clear(), lag_tmp.clear(), kind_tmp.clear();
      for (uint32_t k : perm) {
        idx_tmp.push_back(g.pred_index[k]);
        lag_tmp.push_back(g.pred_lag_us[k]);
        kind_tmp.push_back(g.pred_kind[k]);
      }
      std::copy(idx_tmp.begin(), idx_tmp.end(), g.pred_index.begin() + lo);
      std::copy(lag_tmp.begin(), lag_tmp.end(), g.pred_lag_us.begin() + lo);
      std::copy(kind_tmp.begin(), kind_tmp.end(), g.pred_kind.begin() + lo);
      continue;
    }
    for (uint32_t k = lo + 1; k < hi; ++k)
      for (uint32_t j = k; j > lo && g.pred_index[j - 1] > g.pred_index[j]; --j) {
        std::swap(g.pred_index[j - 1], g.pred_index[j]);
        std::swap(g.pred_lag_us[j - 1], g.pred_lag_us[j]);
        std::swap(g.pred_kind[j - 1], g.pred_kind[j]);
      }
  }
  g.wave_offset = std::move(wave_offset);
  return g;
}

}  // namespace lumos::graph
