// Builds graphs from small hand-written traces and finds nodes and edges in them.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "graph/graph_builder.hpp"
#include "trace/kineto_loader.hpp"
#include "trace/kineto_writer.hpp"

namespace lumos::testing {

struct Built {
  trace::EventTable table;
  graph::BuildResult result;
  const graph::Graph& g() const { return result.graph; }
};

inline Built build(const trace::KinetoWriter& w, graph::BuildOptions opt = {}) {
  const std::string json = w.json();
  Built b{trace::parse_trace_bytes(json.data(), json.size(), "hand-written.json"), {}};
  b.result = graph::build_graph(b.table, opt);
  return b;
}

// The k-th node (in start order) whose name is `name`; fails the test when missing.
inline graph::NodeId node(const graph::Graph& g, const std::string& name, int k = 0) {
  std::vector<graph::NodeId> hits;
  for (graph::NodeId v = 1; v < g.num_nodes(); ++v)
    if (g.names[g.name[v]] == name) hits.push_back(v);
  std::sort(hits.begin(), hits.end(),
            [&](auto a, auto b) { return g.measured_start_us[a] < g.measured_start_us[b]; });
  EXPECT_LT(k, static_cast<int>(hits.size())) << "no node #" << k << " named " << name;
  return k < static_cast<int>(hits.size()) ? hits[k] : graph::kOrigin;
}

// True when g has an edge src -> dst of the given kind.
inline bool has_edge(const graph::Graph& g, graph::NodeId src, graph::NodeId dst,
                     graph::EdgeKind k) {
  for (uint32_t e = g.pred_offset[dst]; e < g.pred_offset[dst + 1]; ++e)
    if (g.pred_index[e] == src && g.pred_kind[e] == k) return true;
  return false;
}

inline double lag(const graph::Graph& g, graph::NodeId src, graph::NodeId dst) {
  for (uint32_t e = g.pred_offset[dst]; e < g.pred_offset[dst + 1]; ++e)
    if (g.pred_index[e] == src) return g.pred_lag_us[e];
  ADD_FAILURE() << "no edge " << src << " -> " << dst;
  return 0;
}

}  // namespace lumos::testing
