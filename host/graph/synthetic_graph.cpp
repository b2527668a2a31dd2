#include "graph/synthetic_graph.hpp"

#include <random>
#include <vector>

#include "common/error.hpp"
#include "graph/flatten.hpp"

namespace lumos::graph {

Graph synthetic_graph(uint32_t nodes, uint64_t seed, uint32_t resources, double cross_edge_prob) {
  LUMOS_EXPECT(nodes >= 2, "synthetic graph: at least 2 nodes");
  LUMOS_EXPECT(resources >= 1, "synthetic graph: at least 1 resource");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dur(1.0, 200.0), lag(0.0, 10.0), coin(0.0, 1.0);
  Draft d;
  d.nodes.push_back({});  // origin
  std::vector<int64_t> last(resources, -1);
  for (uint32_t v = 1; v < nodes; ++v) {
    const uint32_t r = static_cast<uint32_t>(rng() % resources);
    const bool gpu = r >= resources / 2;
    DraftNode n;
    n.kind = gpu ? NodeKind::kKernel : NodeKind::kCpuOp;
    n.cls = gpu ? (coin(rng) < 0.15  ? NodeClass::kComm
                   : coin(rng) < 0.2 ? NodeClass::kMemory
                                     : NodeClass::kCompute)
                : NodeClass::kCpu;
    n.resource = r;
    n.step = 0;
    n.dur_us = dur(rng);
    d.nodes.push_back(n);
    d.edges.push_back({static_cast<uint32_t>(last[r] < 0 ? 0 : last[r]), v,
                       gpu ? EdgeKind::kIntraStream : EdgeKind::kIntraThread, lag(rng)});
    // A launch-like edge from a recent node of another resource.
    if (v > 1 && coin(rng) < cross_edge_prob) {
      const uint32_t back = 1 + static_cast<uint32_t>(rng() % std::min<uint32_t>(64, v - 1));
      const uint32_t p = v - back;
      if (d.nodes[p].resource != r) d.edges.push_back({p, v, EdgeKind::kLaunch, lag(rng)});
    }
    last[r] = v;
  }
  std::vector<NodeId> id;
  Graph g = flatten(
      d, &id, [](uint32_t n) { return "node " + std::to_string(n); }, "synthetic");
  g.resources.resize(resources);
  for (uint32_t r = 0; r < resources; ++r) {
    g.resources[r].kind = r >= resources / 2 ? ResourceKind::kStream : ResourceKind::kThread;
    g.resources[r].b = r;
  }
  g.names = {"synthetic"};
  g.steps.push_back({"synthetic", 0, kOrigin, 0.0});
  g.source = "synthetic";
  return g;
}

}  // namespace lumos::graph
