#include "replay/top_ops.hpp"

#include <algorithm>
#include <unordered_map>

namespace lumos::replay {

using graph::NodeClass;
using graph::NodeId;

std::vector<OpTotal> top_ops(const graph::Graph& g, const ReplayResult& r, OpSide side, size_t n,
                             int32_t rank) {
  std::unordered_map<uint32_t, OpTotal> by_name;
  for (NodeId v = 1; v < g.num_nodes(); ++v) {
    if (g.step[v] < 0 || g.resource[v] == graph::kNoResource) continue;
    if (g.kind[v] == graph::NodeKind::kStepMarker) continue;  // the step itself, not an op
    const NodeClass c = g.cls[v];
    const bool gpu = c == NodeClass::kCompute || c == NodeClass::kComm || c == NodeClass::kMemory;
    if (side == OpSide::kGpu ? !gpu : c != NodeClass::kCpu) continue;
    if (rank >= 0 && g.resources[g.resource[v]].rank != rank) continue;
    OpTotal& t = by_name[g.name[v]];
    t.total_us += r.finish_us[v] - r.start_us[v];
    ++t.count;
  }
  std::vector<OpTotal> out;
  out.reserve(by_name.size());
  for (auto& [name, t] : by_name) {
    t.name = g.names[name];
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const OpTotal& a, const OpTotal& b) {
    return a.total_us != b.total_us ? a.total_us > b.total_us : a.name < b.name;
  });
  if (out.size() > n) out.resize(n);
  return out;
}

}  // namespace lumos::replay
