// Turns a draft graph (nodes and edges in any order) into the flattened IR: topological order
// grouped into wavefronts, predecessor CSR. Detects cycles.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace lumos::graph {

struct DraftNode {
  NodeKind kind = NodeKind::kVirtual;
  NodeClass cls = NodeClass::kVirtual;
  uint32_t resource = kNoResource;
  int32_t step = -1;
  uint32_t name = 0;
  int64_t event = -1;
  double start_us = 0;  // effective measured start relative to t0
  double dur_us = 0;
};

struct DraftEdge {
  uint32_t src, dst;
  EdgeKind kind;
  double lag_us;
};

struct Draft {
  std::vector<DraftNode> nodes;  // node 0 must be the origin
  std::vector<DraftEdge> edges;
};

// Returns the flattened graph (resources, names and steps left empty for the caller) and, in
// new_id, each draft node's index in it. On a cycle throws InputError naming up to six nodes of
// it through describe(draft_node).
Graph flatten(const Draft& d, std::vector<NodeId>* new_id,
              const std::function<std::string(uint32_t)>& describe, const std::string& label);

}  // namespace lumos::graph
