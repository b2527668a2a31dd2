// What transplant (host/whatif/transplant.cpp) needs beyond the graph, built only when
// BuildOptions::transplant_data asks for it: a key per node that finds the same node in another
// step's build, and the resource-free edges whose lags set a step's initial conditions.
#include <algorithm>
#include <map>
#include <tuple>

#include "graph/trace_builder.hpp"

namespace lumos::graph::detail {

// Per resource, name and piece: the k-th occurrence in start order. CPU work inside a top-level
// operator counts within that operator, so a varying number of polling calls in one operator does
// not shift every later match.
std::vector<MatchKey> Builder::match_keys(const std::vector<NodeId>& new_id,
                                          uint32_t num_nodes) const {
  std::vector<MatchKey> keys(num_nodes, MatchKey{});
  std::vector<uint32_t> by_start(nodes_.size() - 1);
  for (uint32_t i = 0; i < by_start.size(); ++i) by_start[i] = i + 1;
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](uint32_t x, uint32_t y) { return nodes_[x].s < nodes_[y].s; });
  // Occurrences of top-level operators per (thread, name), then of nodes within each parent.
  std::map<std::tuple<uint32_t, uint32_t>, uint32_t> parent_seen;
  std::map<int64_t, uint32_t> parent_occ;  // parent event -> occurrence
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> seen;
  for (uint32_t dn : by_start) {
    const DNode& n = nodes_[dn];
    MatchKey k;
    if (n.res != kNoResource) {
      k.resource_kind = static_cast<uint8_t>(resources_[n.res].kind);
      k.a = resources_[n.res].a;
      k.b = resources_[n.res].b;
    }
    if (n.parent != kNone) {
      auto it = parent_occ.find(n.parent_event);
      if (it == parent_occ.end())
        it = parent_occ.emplace(n.parent_event, parent_seen[{n.res, n.parent}]++).first;
      k.parent = n.parent;
      k.parent_occurrence = it->second;
    }
    k.name = n.name;
    k.piece = n.piece;
    k.occurrence = seen[{n.res, k.parent, k.parent_occurrence, n.name, n.piece}]++;
    keys[new_id[dn]] = k;
  }
  return keys;
}

// The origin edges that stand for "resource free" (not the plain t0 anchor), with the part of
// their lag that is the resource's own chain after it became free.
std::vector<FreeEdge> Builder::free_edges(const std::vector<double>& lags,
                                          const std::vector<NodeId>& new_id) const {
  std::vector<FreeEdge> out;
  for (size_t k = 0; k < edges_.size(); ++k) {
    const DEdge& e = edges_[k];
    if (e.kind != EdgeKind::kOrigin || e.pred_finish == t0_ || e.src != 0) continue;
    const DNode& n = nodes_[e.dst];
    FreeEdge fe;
    fe.node = new_id[e.dst];
    fe.resource_kind = static_cast<uint8_t>(resources_[n.res].kind);
    fe.a = resources_[n.res].a;
    fe.b = resources_[n.res].b;
    fe.chain_lag_us = lags[k] - us(e.pred_finish - t0_);
    out.push_back(fe);
  }
  return out;
}

}  // namespace lumos::graph::detail
